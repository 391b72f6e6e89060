import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Scratch } from '../../test/support/scratch.js';
import { AppConfig, ConfigError, DEV_ADMIN_EMAIL } from './app-config.js';
import { parseDurationSeconds } from './duration.js';

const SECRET = 's'.repeat(32);
const scratch = new Scratch();
afterAll(() => scratch.cleanup());

describe(AppConfig.name, () => {
  const load = (env: Record<string, string>, devDefaults = false) =>
    AppConfig.load({ SVC_DATA_DIR: scratch.dir('tms-cfg-'), ...env }, { devDefaults });

  it('applies the documented defaults', () => {
    const sut = load({ SVC_JWT_SECRET: SECRET });
    expect(sut.http.port).toBe(8080);
    expect(sut.auth.accessTtlSeconds).toBe(900);
    expect(sut.auth.refreshTtlSeconds).toBe(30 * 86400);
    expect(sut.auth.cookieSecure).toBe(true);
    expect(sut.auth.loginPerMinute).toBe(60);
    expect(sut.db.url).toBeUndefined();
    expect(sut.kv.url).toBeUndefined();
    expect(sut.bootstrapAdmin).toBeUndefined();
    // API.md, webhooks: a 10 s timeout, retries from 10 s, private addresses refused.
    expect(sut.webhooks).toEqual({ retryBaseSeconds: 10, timeoutMs: 10_000, allowPrivate: false });
    // README, "Retention and deletes": batches of 5,000, a pause after each of 10 ms or 20 % of the batch's time; V2
    // messages wait 7 days for their run.
    expect(sut.retention).toEqual({
      intervalMs: 3_600_000,
      batch: 5000,
      pauseMs: 10,
      pausePercent: 20,
      purgePollMs: 10_000,
      pendingTtlSeconds: 7 * 24 * 3600,
    });
  });

  it("leaves a test's second plain pass unwritten unless SVC_HEALTH_QUIET_SECOND_RUN is false (a rolling upgrade)", () => {
    expect(load({ SVC_JWT_SECRET: SECRET }).healthQuietSecondRun).toBe(true);
    expect(load({ SVC_JWT_SECRET: SECRET, SVC_HEALTH_QUIET_SECOND_RUN: 'false' }).healthQuietSecondRun).toBe(false);
    expect(() => load({ SVC_JWT_SECRET: SECRET, SVC_HEALTH_QUIET_SECOND_RUN: 'later' })).toThrow(
      /SVC_HEALTH_QUIET_SECOND_RUN/,
    );
  });

  it('remembers settled tests unless SVC_HEALTH_SETTLED_CACHE is false (a rolling upgrade)', () => {
    expect(load({ SVC_JWT_SECRET: SECRET }).healthSettledCache).toBe(true);
    expect(load({ SVC_JWT_SECRET: SECRET, SVC_HEALTH_SETTLED_CACHE: 'false' }).healthSettledCache).toBe(false);
    expect(() => load({ SVC_JWT_SECRET: SECRET, SVC_HEALTH_SETTLED_CACHE: 'maybe' })).toThrow(
      /SVC_HEALTH_SETTLED_CACHE/,
    );
  });

  it('reads the retention pause and refuses one out of range, naming it', () => {
    const sut = load({ SVC_JWT_SECRET: SECRET, SVC_RETENTION_PAUSE_MS: '0', SVC_RETENTION_PAUSE_PERCENT: '50' });
    expect(sut.retention).toMatchObject({ pauseMs: 0, pausePercent: 50 });
    expect(() => load({ SVC_JWT_SECRET: SECRET, SVC_RETENTION_PAUSE_PERCENT: '1001' })).toThrow(
      /SVC_RETENTION_PAUSE_PERCENT/,
    );
    expect(() => load({ SVC_JWT_SECRET: SECRET, SVC_RETENTION_PAUSE_PERCENT: '-1' })).toThrow(
      /SVC_RETENTION_PAUSE_PERCENT/,
    );
  });

  describe('directory login', () => {
    const ldap = {
      SVC_JWT_SECRET: SECRET,
      SVC_AUTH_LDAP_ENABLED: 'true',
      SVC_LDAP_URL: 'ldaps://dc1.corp.example:636',
      SVC_LDAP_BASE_DN: 'dc=corp,dc=example',
      SVC_LDAP_MANAGER_DN: 'cn=svc-tms,ou=service,dc=corp,dc=example',
      SVC_LDAP_MANAGER_PASSWORD: 'manager-secret',
      SVC_LDAP_USER_SEARCH_FILTER: '(sAMAccountName={0})',
    };

    it('is off unless enabled, and then takes its defaults from the base DN', () => {
      expect(load({ SVC_JWT_SECRET: SECRET }).ldap).toBeUndefined();
      expect(load(ldap).ldap).toEqual(
        expect.objectContaining({
          userSearchBase: 'dc=corp,dc=example',
          groupSearchBase: 'dc=corp,dc=example',
          groupSearchFilter: '(member={0})',
          connectTimeoutMs: 5000,
          timeoutMs: 5000,
          rejectUnauthorized: true,
        }),
      );
    });

    it('refuses to start, naming them, when required variables are missing or malformed', () => {
      for (const name of ['SVC_LDAP_URL', 'SVC_LDAP_BASE_DN', 'SVC_LDAP_MANAGER_DN', 'SVC_LDAP_MANAGER_PASSWORD', 'SVC_LDAP_USER_SEARCH_FILTER']) {
        expect(() => load({ ...ldap, [name]: '' })).toThrow(new RegExp(`SVC_AUTH_LDAP_ENABLED=true needs ${name}`));
      }
      expect(() => load({ ...ldap, SVC_LDAP_URL: 'http://dc1' })).toThrow(/SVC_LDAP_URL must be ldap:\/\/host/);
      expect(() => load({ ...ldap, SVC_LDAP_USER_SEARCH_FILTER: 'uid=x' })).toThrow(/SVC_LDAP_USER_SEARCH_FILTER must be a filter/);
      expect(() => load({ ...ldap, SVC_LDAP_TIMEOUT: 'forever' })).toThrow(/SVC_LDAP_TIMEOUT/);
      expect(() => load({ ...ldap, SVC_LDAP_STARTTLS: 'true' })).toThrow(/SVC_LDAP_STARTTLS applies to ldap:\/\/ only/);
    });
  });

  it('requires SVC_JWT_SECRET', () => {
    expect(() => load({})).toThrow(ConfigError);
    expect(() => load({})).toThrow(/SVC_JWT_SECRET/);
  });

  it('refuses a secret under 32 bytes, counting bytes rather than characters', () => {
    expect(() => load({ SVC_JWT_SECRET: 's'.repeat(31) })).toThrow(/SVC_JWT_SECRET must be at least 32 bytes/);
    expect(load({ SVC_JWT_SECRET: 'é'.repeat(16) }).auth.jwtSecret).toBe('é'.repeat(16));
  });

  it.each([
    ['SVC_DB_URL', 'mysql://localhost/db'],
    ['SVC_KVSTORE_URL', 'http://localhost:6379'],
    ['SVC_ACCESS_TTL', '15 minutes'],
    ['SVC_REFRESH_TTL', '-1d'],
    ['PORT', '0'],
    ['PORT', 'eighty'],
    ['SVC_COOKIE_SECURE', 'yes please'],
    ['SVC_BOOTSTRAP_ADMIN_EMAIL', 'not-an-email'],
  ])('names %s when it is invalid (%s)', (name, value) => {
    expect(() => load({ SVC_JWT_SECRET: SECRET, SVC_BOOTSTRAP_ADMIN_PASSWORD: 'p'.repeat(12), [name]: value })).toThrow(
      new RegExp(name),
    );
  });

  it('reads TTLs in the 15m / 30d forms', () => {
    const sut = load({ SVC_JWT_SECRET: SECRET, SVC_ACCESS_TTL: '5m', SVC_REFRESH_TTL: '7d' });
    expect(sut.auth.accessTtlSeconds).toBe(300);
    expect(sut.auth.refreshTtlSeconds).toBe(7 * 86400);
  });

  it('needs both bootstrap admin variables or neither', () => {
    expect(() => load({ SVC_JWT_SECRET: SECRET, SVC_BOOTSTRAP_ADMIN_EMAIL: 'a@example.com' })).toThrow(
      /must be set together/,
    );
  });

  it('generates, keeps and reuses a secret and an admin password with dev defaults', () => {
    const dataDir = scratch.dir('tms-cfg-');
    const first = AppConfig.load({ SVC_DATA_DIR: dataDir }, { devDefaults: true });
    expect(Buffer.byteLength(first.auth.jwtSecret)).toBeGreaterThanOrEqual(32);
    expect(first.bootstrapAdmin?.email).toBe(DEV_ADMIN_EMAIL);
    expect(first.generated).toHaveLength(2);
    const file = join(dataDir, 'secrets', 'jwt-secret');
    expect(readFileSync(file, 'utf8').trim()).toBe(first.auth.jwtSecret);
    expect(statSync(file).mode & 0o777).toBe(0o600);

    const second = AppConfig.load({ SVC_DATA_DIR: dataDir }, { devDefaults: true });
    expect(second.auth.jwtSecret).toBe(first.auth.jwtSecret);
    expect(second.bootstrapAdmin?.password).toBe(first.bootstrapAdmin?.password);
    expect(second.generated).toHaveLength(0);
  });
});

describe(parseDurationSeconds.name, () => {
  it.each([
    ['900', 900],
    ['90s', 90],
    ['15m', 900],
    ['12h', 43200],
    ['30d', 2592000],
  ])('%s is %d seconds', (text, seconds) => expect(parseDurationSeconds(text)).toBe(seconds));

  it.each(['', '0', '15 m', '1w', '-5m', 'abc'])('refuses %j', (text) => expect(parseDurationSeconds(text)).toBeUndefined());
});

describe('empty variables', () => {
  it('mean the same as unset ones', () => {
    const sut = AppConfig.load({
      SVC_JWT_SECRET: 's'.repeat(32),
      SVC_DATA_DIR: scratch.dir('tms-cfg-'),
      SVC_LOG_LEVEL: '',
      SVC_BODY_LIMIT: '',
      PORT: '',
      SVC_ACCESS_TTL: '',
      SVC_DB_URL: '',
    });
    expect(sut.logLevel).toBe('log');
    expect(sut.http.bodyLimit).toBe('10mb');
    expect(sut.http.port).toBe(8080);
    expect(sut.auth.accessTtlSeconds).toBe(900);
    expect(sut.db.url).toBeUndefined();
  });

  describe('mail', () => {
    const load = (env: Record<string, string>) => AppConfig.load({ SVC_DATA_DIR: scratch.dir('tms-cfg-'), ...env });

    it('without SMTP_HOST uses the outbox in SVC_DATA_DIR, with a sender from the base URL and a limit of 5', () => {
      const sut = load({ SVC_JWT_SECRET: SECRET, SVC_BASE_URL: 'https://tms.example.com/' });
      expect(sut.mail.smtp).toBeUndefined();
      expect(sut.mail.outboxDir).toBe(join(sut.dataDir, 'outbox'));
      expect(sut.mail.from).toEqual({ name: 'TMS', address: 'noreply@tms.example.com' });
      expect(sut.mail.perRecipientPerHour).toBe(5);
    });

    it('reads SMTP_* and MAIL_FROM (not prefixed SVC_) and defaults the port to 587', () => {
      const sut = load({
        SVC_JWT_SECRET: SECRET,
        SMTP_HOST: 'smtp.example.com',
        SMTP_USER: 'resend',
        SMTP_PASS: 're_123',
        MAIL_FROM: 'Test Management <tms@example.com>',
        SVC_SMTP_TLS_REJECT_UNAUTHORIZED: 'false',
        SVC_MAIL_RATE_PER_RECIPIENT: '9',
      });
      expect(sut.mail.smtp).toEqual({ host: 'smtp.example.com', port: 587, user: 'resend', pass: 're_123', rejectUnauthorized: false });
      expect(sut.mail.from).toEqual({ name: 'Test Management', address: 'tms@example.com' });
      expect(sut.mail.perRecipientPerHour).toBe(9);
    });

    it('treats empty SMTP_USER and SMTP_PASS as no authentication', () => {
      const sut = load({ SVC_JWT_SECRET: SECRET, SMTP_HOST: 'localhost', SMTP_PORT: '25', SMTP_USER: '', SMTP_PASS: '' });
      expect(sut.mail.smtp).toMatchObject({ port: 25, user: undefined, pass: undefined });
    });

    it.each([
      [{ SMTP_HOST: 'smtp.example.com', SMTP_USER: 'only-user' }, /SMTP_USER and SMTP_PASS/],
      [{ SMTP_HOST: 'smtp.example.com', SMTP_PORT: '99999' }, /SMTP_PORT/],
      [{ SMTP_HOST: 'smtp.example.com\r\nX: y' }, /SMTP_HOST/],
      [{ MAIL_FROM: 'tms@example.com\r\nBcc: victim@example.com' }, /MAIL_FROM/],
      [{ MAIL_FROM: 'not an address' }, /MAIL_FROM/],
      [{ SVC_BILLING_WEBHOOK_SECRET: 'short' }, /SVC_BILLING_WEBHOOK_SECRET/],
    ])('refuses %j', (env, message) => {
      expect(() => load({ SVC_JWT_SECRET: SECRET, ...env })).toThrow(message);
    });
  });

  describe('encryption key', () => {
    const key = Buffer.alloc(32, 7);
    const load = (env: Record<string, string>) => AppConfig.load({ SVC_DATA_DIR: scratch.dir('tms-cfg-'), ...env });

    it('reads SVC_ENCRYPTION_KEY as hex or base64 (standard or URL-safe)', () => {
      for (const text of [key.toString('hex'), key.toString('base64'), key.toString('base64url')]) {
        expect(load({ SVC_JWT_SECRET: SECRET, SVC_ENCRYPTION_KEY: text }).encryption).toEqual({ key, derived: false });
      }
    });

    it('derives a stable key from SVC_JWT_SECRET when unset, different from the secret and per secret', () => {
      const a = load({ SVC_JWT_SECRET: SECRET }).encryption;
      expect(a.derived).toBe(true);
      expect(a.key).toHaveLength(32);
      expect(load({ SVC_JWT_SECRET: SECRET }).encryption.key).toEqual(a.key);
      expect(load({ SVC_JWT_SECRET: 't'.repeat(32) }).encryption.key).not.toEqual(a.key);
      expect(a.key.toString('utf8')).not.toContain(SECRET);
    });

    it.each([['too short', key.subarray(0, 16).toString('hex')], ['not a key', 'my encryption passphrase of 44 characters!!']])(
      'refuses a key that is %s',
      (_label, text) => {
        expect(() => load({ SVC_JWT_SECRET: SECRET, SVC_ENCRYPTION_KEY: text })).toThrow(/SVC_ENCRYPTION_KEY must be 32 random bytes/);
      },
    );
  });
});
