import { smtpOptions, SMTP_TIMEOUT_MS } from './smtp-mail.transport.js';

describe('smtpOptions', () => {
  const base = { host: 'relay.example.com', rejectUnauthorized: true };

  it('port 465: implicit TLS', () => {
    expect(smtpOptions({ ...base, port: 465, user: 'resend', pass: 'key' })).toMatchObject({
      secure: true,
      requireTLS: false,
      auth: { user: 'resend', pass: 'key' },
    });
  });

  it('port 587: STARTTLS required', () => {
    expect(smtpOptions({ ...base, port: 587, user: 'u', pass: 'p' })).toMatchObject({ secure: false, requireTLS: true });
  });

  it('port 25 (or 587) with empty user and password: no auth at all', () => {
    expect(smtpOptions({ ...base, port: 25 }).auth).toBeUndefined();
    expect(smtpOptions({ ...base, port: 587, user: '', pass: '' }).auth).toBeUndefined();
  });

  it('any other port: STARTTLS when offered', () => {
    expect(smtpOptions({ ...base, port: 2525 })).toMatchObject({ secure: false, requireTLS: false });
    expect(smtpOptions({ ...base, port: 2525 }).ignoreTLS).toBeFalsy();
  });

  it('sets the connect, greeting and socket timeouts to 10 s explicitly', () => {
    expect(SMTP_TIMEOUT_MS).toBe(10_000);
    expect(smtpOptions({ ...base, port: 587 })).toMatchObject({
      connectionTimeout: 10_000,
      greetingTimeout: 10_000,
      socketTimeout: 10_000,
    });
  });

  it('passes SVC_SMTP_TLS_REJECT_UNAUTHORIZED on', () => {
    expect(smtpOptions({ ...base, port: 587, rejectUnauthorized: false }).tls).toMatchObject({ rejectUnauthorized: false });
  });
});
