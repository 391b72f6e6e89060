import { type FormEvent, useCallback, useState } from 'react';
import { Link, Navigate, useSearchParams } from 'react-router';
import type { TwoFactorChallenge } from '../api/client';
import { ApiError, type AccessToken } from '../api/session';
import { useSession, useSignedIn } from '../session-context';
import { Countdown, ErrorMessage, Field, Notice, Page } from '../ui/components';

const REASONS: Record<string, string> = {
  revoked: 'Your session ended (signed out elsewhere, or the account was changed). Sign in again.',
};

/** Sign in: email (or directory user name) and password, then the two-factor code when it is active. */
export function SignIn() {
  const { session, api } = useSession();
  const signedIn = useSignedIn();
  const [params] = useSearchParams();
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [challenge, setChallenge] = useState<TwoFactorChallenge | undefined>();
  const [code, setCode] = useState('');
  const [error, setError] = useState<unknown>();
  const [waitSeconds, setWaitSeconds] = useState<number | undefined>();
  const [busy, setBusy] = useState(false);
  const clearWait = useCallback(() => setWaitSeconds(undefined), []);

  if (signedIn) {
    return <Navigate to={sameOriginPath(params.get('next'))} replace />;
  }

  async function attempt(run: () => Promise<AccessToken | TwoFactorChallenge>) {
    setBusy(true);
    setError(undefined);
    try {
      const outcome = await run();
      if ('twoFactorRequired' in outcome) {
        setChallenge(outcome);
      } else {
        session.accept(outcome);
      }
    } catch (e) {
      if (e instanceof ApiError && e.status === 429 && e.retryAfterSeconds) {
        setWaitSeconds(e.retryAfterSeconds);
      } else {
        setError(e);
      }
    } finally {
      setBusy(false);
    }
  }

  const signIn = (event: FormEvent) => {
    event.preventDefault();
    void attempt(() => api.login(username.trim(), password));
  };
  const verify = (event: FormEvent) => {
    event.preventDefault();
    void attempt(() => api.verifyTwoFactor(challenge!.challengeToken, code.trim()));
  };

  const reason = session.signedOutReason ? REASONS[session.signedOutReason] : undefined;
  return (
    <Page title="Sign in">
      {reason ? <Notice>{reason}</Notice> : null}
      {challenge ? (
        <form className="card narrow" onSubmit={verify} noValidate>
          <p>Enter the 6-digit code from your authenticator app, or one of your recovery codes.</p>
          <Field
            label="Code"
            name="code"
            autoComplete="one-time-code"
            inputMode="text"
            required
            value={code}
            onChange={(e) => setCode(e.target.value)}
            autoFocus
          />
          {waitSeconds ? (
            <Countdown seconds={waitSeconds} onDone={clearWait} />
          ) : (
            <ErrorMessage error={error} />
          )}
          <button type="submit" disabled={busy || !code.trim() || waitSeconds !== undefined}>
            Verify
          </button>
          <button
            type="button"
            className="link"
            onClick={() => (setChallenge(undefined), setCode(''), setError(undefined))}
          >
            Back
          </button>
        </form>
      ) : (
        <form className="card narrow" onSubmit={signIn} noValidate>
          <Field
            label="Email or user name"
            name="username"
            autoComplete="username"
            required
            value={username}
            onChange={(e) => setUsername(e.target.value)}
            autoFocus
          />
          <Field
            label="Password"
            name="password"
            type="password"
            autoComplete="current-password"
            required
            value={password}
            onChange={(e) => setPassword(e.target.value)}
          />
          {waitSeconds ? (
            <Countdown seconds={waitSeconds} onDone={clearWait} />
          ) : (
            <ErrorMessage error={error} />
          )}
          <button type="submit" disabled={busy || !username.trim() || !password || waitSeconds !== undefined}>
            {busy ? 'Signing in…' : 'Sign in'}
          </button>
          <p className="links">
            <Link to="/forgot-password">Forgot your password?</Link> ·{' '}
            <Link to="/register">Create an account</Link>
          </p>
          <p className="hint">Directory (LDAP) users sign in with their directory user name and password.</p>
        </form>
      )}
    </Page>
  );
}

/** `next` as a path of this origin (not `//host` nor `/\\host`, which browsers read as another host), else `/`. */
export function sameOriginPath(next: string | null): string {
  if (!next) {
    return '/';
  }
  try {
    const url = new URL(next, window.location.origin);
    return url.origin === window.location.origin ? `${url.pathname}${url.search}${url.hash}` : '/';
  } catch {
    return '/';
  }
}
