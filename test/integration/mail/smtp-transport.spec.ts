import { BrokenCircuitError, CircuitState } from 'cockatiel';
import { SmtpMailTransport } from '../../../src/infra/mail-transport/smtp-mail.transport.js';
import { mailCircuitBreaker } from '../../../src/mail/mail-circuit-breaker.js';
import { silentRelay, TestRelay } from '../../support/smtp.js';

const FROM = { name: 'TMS', address: 'noreply@tms.example.com' };
const mail = (to = 'grace@example.com') => ({
  kind: 'verification',
  to,
  subject: 'TMS: confirm your email address',
  text: 'Hello Grace,\n\nhttp://localhost:8080/verify-email?token=abc\n',
});

describe('SMTP transport against a real SMTP server', () => {
  const relays: TestRelay[] = [];
  const relay = async (options: ConstructorParameters<typeof TestRelay>[0]) => {
    const r = await new TestRelay(options).start();
    relays.push(r);
    return r;
  };
  afterAll(() => Promise.all(relays.map((r) => r.close())));

  const transport = (port: number, extra: { user?: string; pass?: string; rejectUnauthorized?: boolean } = {}) =>
    new SmtpMailTransport({ host: '127.0.0.1', port, rejectUnauthorized: false, ...extra }, FROM);

  it('sends plain text only (no HTML part) from MAIL_FROM, anonymously, and never tries AUTH with empty credentials', async () => {
    const r = await relay({});
    await transport(r.port, { user: '', pass: '' }).send(mail());
    const [message] = r.to('grace@example.com');
    expect(message.headers['content-type']).toMatch(/^text\/plain/i);
    expect(message.raw).not.toMatch(/text\/html|multipart/i);
    expect(message.raw).toMatch(/^From: TMS <noreply@tms\.example\.com>/m);
    expect(message.from).toBe('noreply@tms.example.com');
    expect(message.subject).toBe('TMS: confirm your email address');
    expect(message.text).toContain('verify-email?token=abc');
    expect(r.authAttempts).toEqual([]);
  });

  it('authenticates when SMTP_USER and SMTP_PASS are set, over STARTTLS with a self-signed certificate', async () => {
    const r = await relay({ starttls: true, auth: { user: 'resend', pass: 're_key_123' } });
    await transport(r.port, { user: 'resend', pass: 're_key_123' }).send(mail());
    expect(r.messages).toHaveLength(1);
    expect(r.messages[0].user).toBe('resend');
    expect(r.messages[0].secure).toBe(true); // upgraded before AUTH and DATA
  });

  it('speaks implicit TLS on port 465 rules (secure from the first byte)', async () => {
    const r = await relay({ secure: true, auth: { user: 'u', pass: 'p' } });
    // The port decides the mode (465 → implicit); this relay listens on a random port, so name the mode.
    const t = new SmtpMailTransport(
      { host: '127.0.0.1', port: r.port, user: 'u', pass: 'p', rejectUnauthorized: false, tls: 'implicit' },
      FROM,
    );
    await t.send(mail());
    expect(r.messages[0].secure).toBe(true);
  });

  it('port 587 rules: refuses to send in clear text when the relay offers no STARTTLS', async () => {
    const r = await relay({});
    const t = new SmtpMailTransport({ host: '127.0.0.1', port: r.port, rejectUnauthorized: false, tls: 'starttls-required' }, FROM);
    await expect(t.send(mail())).rejects.toThrow(/STARTTLS/i);
    expect(r.messages).toHaveLength(0);
  });

  it('refuses a self-signed certificate unless SVC_SMTP_TLS_REJECT_UNAUTHORIZED=false', async () => {
    const r = await relay({ starttls: true });
    const strict = new SmtpMailTransport(
      { host: '127.0.0.1', port: r.port, rejectUnauthorized: true, tls: 'starttls-required' },
      FROM,
    );
    await expect(strict.send(mail())).rejects.toThrow(/certificate/i);
    expect(r.messages).toHaveLength(0);
  });

  it('gives up on a relay that accepts TCP and never greets after the 10 s greeting timeout', async () => {
    const silent = await silentRelay();
    try {
      const started = Date.now();
      const error = await transport(silent.port)
        .send(mail())
        .then(() => undefined, (e: Error & { code?: string }) => e);
      expect(error).toBeDefined();
      expect(error!.code).toMatch(/ETIMEDOUT|ECONNECTION/);
      // The configured timeout, not nodemailer's default of minutes (a lower and an upper bound of the setting).
      expect(Date.now() - started).toBeGreaterThanOrEqual(9_500);
      expect(Date.now() - started).toBeLessThan(30_000);
    } finally {
      await silent.close();
    }
  }, 40_000);

  it('a relay answering 451: the breaker opens after the window of 10, does not connect while open, then 3 trials', async () => {
    const r = await relay({ rejectWith: { code: 451, message: 'Try again later' } });
    let clock = 0;
    const breaker = mailCircuitBreaker(() => clock);
    const t = transport(r.port);
    const send = () =>
      breaker.execute(() => t.send(mail())).then(
        () => 'sent',
        (e: Error & { responseCode?: number }) => (e instanceof BrokenCircuitError ? 'refused' : e.responseCode),
      );

    for (let i = 0; i < 9; i++) {
      expect(await send()).toBe(451);
    }
    expect(breaker.state).toBe(CircuitState.Closed);
    expect(await send()).toBe(451);
    expect(breaker.state).toBe(CircuitState.Open);
    expect(r.connections).toBe(10);

    for (let i = 0; i < 5; i++) {
      expect(await send()).toBe('refused');
    }
    expect(r.connections).toBe(10); // nothing reached the relay while open

    clock += 60_000;
    expect(await Promise.all([send(), send(), send(), send()])).toEqual([451, 451, 451, 'refused']);
    expect(breaker.state).toBe(CircuitState.Open);
    expect(r.connections).toBeLessThanOrEqual(13);

    // The relay recovers: after another 60 s three successful trials close the circuit.
    r.options.rejectWith = undefined;
    clock += 60_000;
    expect(await Promise.all([send(), send(), send()])).toEqual(['sent', 'sent', 'sent']);
    expect(breaker.state).toBe(CircuitState.Closed);
    expect(await send()).toBe('sent');
  }, 30_000);
});
