import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import type { Enrolment } from '../../api/client';
import { useApi, useMe } from '../../session-context';
import { ErrorMessage, Field, Loading, Notice, Page } from '../../ui/components';
import { outcomeOf, said } from '../../ui/outcome';

/** Two-factor authentication: status, enrolment (QR code, secret, recovery codes), activation, disabling. */
export function Security() {
  const api = useApi();
  const { me } = useMe();
  const queries = useQueryClient();
  const status = useQuery({ queryKey: ['2fa'], queryFn: () => api.twoFactorStatus() });
  const [enrolment, setEnrolment] = useState<Enrolment | undefined>();
  const [code, setCode] = useState('');
  const refresh = () => {
    setCode('');
    void queries.invalidateQueries({ queryKey: ['2fa'] });
    void queries.invalidateQueries({ queryKey: ['me'] });
  };
  const enrol = useMutation({
    mutationFn: () => api.enrolTwoFactor(),
    onSuccess: (e) => setEnrolment(e),
  });
  const activate = useMutation({
    mutationFn: () => api.activateTwoFactor(code.trim()),
    onSuccess: () => {
      setEnrolment(undefined);
      refresh();
    },
  });
  const disable = useMutation({
    mutationFn: () => api.disableTwoFactor(code.trim()),
    onSuccess: refresh,
  });
  const outcome = outcomeOf({
    enrol: said(enrol),
    activate: said(activate, () => 'Two-factor authentication is on. Signing in now asks for a code.'),
    disable: said(disable, () => 'Two-factor authentication is off.'),
  });

  const download = (codes: string[]) => {
    const url = URL.createObjectURL(new Blob([`${codes.join('\n')}\n`], { type: 'text/plain' }));
    const a = document.createElement('a');
    a.href = url;
    a.download = 'recovery-codes.txt';
    a.click();
    URL.revokeObjectURL(url);
  };

  return (
    <Page title="Security">
      {me?.authSource === 'LDAP' ? (
        <Notice>Your password belongs to the directory (LDAP): change it there, not here.</Notice>
      ) : null}
      <h2>Two-factor authentication</h2>
      {outcome.notice ? <Notice>{outcome.notice}</Notice> : null}
      {status.isPending ? (
        <Loading />
      ) : status.error ? (
        <ErrorMessage error={status.error} />
      ) : status.data.enabled ? (
        <form
          className="card narrow"
          onSubmit={(e: FormEvent) => {
            e.preventDefault();
            disable.mutate();
          }}
          noValidate
        >
          <p>
            <strong>On.</strong> {status.data.recoveryCodesRemaining} of 10 recovery codes left.
          </p>
          <Field
            label="Current 6-digit code"
            name="code"
            inputMode="numeric"
            autoComplete="one-time-code"
            value={code}
            onChange={(e) => setCode(e.target.value)}
            hint="To turn two-factor off, enter a code from your app (not a recovery code)."
          />
          <ErrorMessage error={outcome.errorOf('disable')} />
          <button
            type="submit"
            className="danger"
            disabled={disable.isPending || !/^\d{6}$/.test(code.trim())}
          >
            Turn off two-factor
          </button>
        </form>
      ) : enrolment ? (
        <form
          className="card"
          onSubmit={(e: FormEvent) => {
            e.preventDefault();
            activate.mutate();
          }}
          noValidate
        >
          <ol className="steps">
            <li>
              <p>Scan the QR code with an authenticator app, or enter the secret by hand.</p>
              <img
                src={enrolment.qrCodeDataUrl}
                alt="QR code of the two-factor secret"
                width={200}
                height={200}
              />
              <p>
                Secret: <code data-testid="totp-secret">{enrolment.secret}</code> ·{' '}
                <a href={enrolment.otpauthUrl}>otpauth link</a>
              </p>
            </li>
            <li>
              <p>
                Keep these recovery codes somewhere safe. Each signs you in once when you do not have your
                app.
              </p>
              <ul className="codes" data-testid="recovery-codes">
                {enrolment.recoveryCodes.map((c) => (
                  <li key={c}>
                    <code>{c}</code>
                  </li>
                ))}
              </ul>
              <button type="button" onClick={() => download(enrolment.recoveryCodes)}>
                Download as a text file
              </button>{' '}
              <button
                type="button"
                onClick={() => void navigator.clipboard?.writeText(enrolment.recoveryCodes.join('\n'))}
              >
                Copy
              </button>
            </li>
            <li>
              <Field
                label="6-digit code from the app"
                name="code"
                inputMode="numeric"
                autoComplete="one-time-code"
                value={code}
                onChange={(e) => setCode(e.target.value)}
              />
            </li>
          </ol>
          <ErrorMessage error={outcome.errorOf('activate')} />
          <button type="submit" disabled={activate.isPending || !/^\d{6}$/.test(code.trim())}>
            Activate
          </button>
        </form>
      ) : (
        <div className="card narrow">
          <p>
            <strong>Off.</strong> With two-factor on, signing in also asks for a code from an authenticator
            app.
          </p>
          <ErrorMessage error={outcome.errorOf('enrol')} />
          <button type="button" onClick={() => enrol.mutate()} disabled={enrol.isPending}>
            Set up two-factor
          </button>
        </div>
      )}
    </Page>
  );
}
