import { type FormEvent, type ReactNode, useState } from 'react';
import { Link, useSearchParams } from 'react-router';
import { useApi } from '../session-context';
import { ErrorMessage, Field, Notice, Page } from '../ui/components';

/** The server's password policy (PASSWORD_MIN..PASSWORD_MAX, not the email), checked before submit. */
export const PASSWORD_MIN = 12;
export const PASSWORD_MAX = 256;

export function passwordProblem(password: string, email?: string): string | undefined {
  if (password.length < PASSWORD_MIN) {
    return `At least ${PASSWORD_MIN} characters (${password.length} so far).`;
  }
  if (password.length > PASSWORD_MAX) {
    return `At most ${PASSWORD_MAX} characters.`;
  }
  if (email && password.trim().toLowerCase() === email.trim().toLowerCase()) {
    return 'Not your email address.';
  }
  return undefined;
}

const POLICY = `At least ${PASSWORD_MIN} characters; not your email address. A passphrase of a few words is easy to remember.`;

/** A form whose submit runs `action`; shows its error, or `done` once it succeeded. */
function useSubmit(action: () => Promise<unknown>) {
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const [done, setDone] = useState(false);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    action()
      .then(() => setDone(true))
      .catch(setError)
      .finally(() => setBusy(false));
  };
  return { error, busy, done, submit };
}

function Done({ children }: { children: ReactNode }) {
  return (
    <div className="card narrow">
      <Notice>{children}</Notice>
      <p>
        <Link to="/sign-in">Go to sign in</Link>
      </p>
    </div>
  );
}

export function Register() {
  const api = useApi();
  const [fullName, setFullName] = useState('');
  const [email, setEmail] = useState('');
  const form = useSubmit(() => api.register(fullName.trim(), email.trim()));
  return (
    <Page title="Create an account">
      {form.done ? (
        <Done>
          Check your inbox: we sent a link to {email} to verify the address and choose your password.
        </Done>
      ) : (
        <form className="card narrow" onSubmit={form.submit} noValidate>
          <Field
            label="Full name"
            name="fullName"
            autoComplete="name"
            required
            value={fullName}
            onChange={(e) => setFullName(e.target.value)}
          />
          <Field
            label="Email"
            name="email"
            type="email"
            autoComplete="email"
            required
            value={email}
            onChange={(e) => setEmail(e.target.value)}
          />
          <ErrorMessage error={form.error} />
          <button type="submit" disabled={form.busy || !fullName.trim() || !email.includes('@')}>
            Create account
          </button>
          <p className="links">
            Already have one? <Link to="/sign-in">Sign in</Link>
          </p>
        </form>
      )}
    </Page>
  );
}

/** Choosing a password with a token from a mail: verify-email and reset-password. */
function PasswordWithToken({
  title,
  intro,
  submitLabel,
  doneText,
  send,
}: {
  title: string;
  intro: string;
  submitLabel: string;
  doneText: string;
  send: (token: string, password: string) => Promise<unknown>;
}) {
  const [params] = useSearchParams();
  const token = params.get('token') ?? '';
  const [password, setPassword] = useState('');
  const [repeat, setRepeat] = useState('');
  const [touched, setTouched] = useState(false);
  const problem = passwordProblem(password);
  const mismatch = repeat && repeat !== password ? 'The two passwords differ.' : undefined;
  const form = useSubmit(() => send(token, password));
  return (
    <Page title={title}>
      {!token ? (
        <div className="card narrow">
          <ErrorMessage error={new Error('This link has no token: open the link from the mail again.')} />
        </div>
      ) : form.done ? (
        <Done>{doneText}</Done>
      ) : (
        <form
          className="card narrow"
          onSubmit={(e) => {
            setTouched(true);
            if (problem || mismatch || !repeat) {
              e.preventDefault();
              return;
            }
            form.submit(e);
          }}
          noValidate
        >
          <p>{intro}</p>
          <Field
            label="New password"
            name="password"
            type="password"
            autoComplete="new-password"
            required
            value={password}
            onChange={(e) => setPassword(e.target.value)}
            hint={POLICY}
            error={touched ? problem : undefined}
          />
          <Field
            label="Repeat the password"
            name="repeat"
            type="password"
            autoComplete="new-password"
            required
            value={repeat}
            onChange={(e) => setRepeat(e.target.value)}
            error={touched ? (mismatch ?? (!repeat ? 'Repeat the password.' : undefined)) : undefined}
          />
          <ErrorMessage error={form.error} />
          <button type="submit" disabled={form.busy}>
            {submitLabel}
          </button>
        </form>
      )}
    </Page>
  );
}

export function VerifyEmail() {
  const api = useApi();
  return (
    <PasswordWithToken
      title="Verify your email"
      intro="Choose the password of your new account."
      submitLabel="Verify and set password"
      doneText="Your address is verified and your password set."
      send={(token, password) => api.verifyEmail(token, password)}
    />
  );
}

export function ResetPassword() {
  const api = useApi();
  return (
    <PasswordWithToken
      title="Reset your password"
      intro="Choose a new password. Every session of your account will be signed out."
      submitLabel="Set new password"
      doneText="Your password is changed."
      send={(token, password) => api.resetPassword(token, password)}
    />
  );
}

export function ForgotPassword() {
  const api = useApi();
  const [email, setEmail] = useState('');
  const form = useSubmit(() => api.forgotPassword(email.trim()));
  return (
    <Page title="Forgot your password?">
      {form.done ? (
        <Done>
          If {email} belongs to an account with a password here, a reset link is on its way. Directory (LDAP)
          users: the directory owns your password; change it there.
        </Done>
      ) : (
        <form className="card narrow" onSubmit={form.submit} noValidate>
          <Field
            label="Email"
            name="email"
            type="email"
            autoComplete="email"
            required
            value={email}
            onChange={(e) => setEmail(e.target.value)}
          />
          <p className="hint">
            Directory (LDAP) users cannot reset their password here: the directory owns it.
          </p>
          <ErrorMessage error={form.error} />
          <button type="submit" disabled={form.busy || !email.includes('@')}>
            Send reset link
          </button>
        </form>
      )}
    </Page>
  );
}

export function AcceptInvitation() {
  const api = useApi();
  const [params] = useSearchParams();
  const token = params.get('token') ?? '';
  const [fullName, setFullName] = useState('');
  const [password, setPassword] = useState('');
  const [result, setResult] = useState<{ accountCreated: boolean } | undefined>();
  const form = useSubmit(() =>
    api
      .acceptInvitation({
        token,
        ...(fullName.trim() ? { fullName: fullName.trim() } : {}),
        ...(password ? { password } : {}),
      })
      .then(setResult),
  );
  return (
    <Page title="Accept the invitation">
      {form.done && result ? (
        <Done>
          {result.accountCreated ? 'Your account is ready.' : 'The invitation is accepted for your account.'}
        </Done>
      ) : (
        <form className="card narrow" onSubmit={form.submit} noValidate>
          <p>
            Already have an account? Accept with no more than this button. New here? Choose your name and
            password.
          </p>
          <Field
            label="Full name (new accounts)"
            name="fullName"
            autoComplete="name"
            value={fullName}
            onChange={(e) => setFullName(e.target.value)}
          />
          <Field
            label="Password (new accounts)"
            name="password"
            type="password"
            autoComplete="new-password"
            value={password}
            onChange={(e) => setPassword(e.target.value)}
            hint={POLICY}
            error={password ? passwordProblem(password) : undefined}
          />
          <ErrorMessage error={form.error} />
          <button type="submit" disabled={form.busy || !token}>
            Accept invitation
          </button>
        </form>
      )}
    </Page>
  );
}
