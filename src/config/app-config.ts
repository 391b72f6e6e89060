import { hkdfSync, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { plainToInstance } from 'class-transformer';
import { validateSync, ValidationError } from 'class-validator';
import { parseDurationSeconds } from './duration.js';
import { decodeKey256, EnvironmentVariables } from './env.schema.js';
import { Mailbox, parseMailbox } from './mailbox.js';

export class ConfigError extends Error {
  override name = 'ConfigError';
}

export interface LoadOptions {
  /** `npm start`: generate and keep a JWT secret and a bootstrap admin under SVC_DATA_DIR when unset. */
  devDefaults?: boolean;
}

export const DEV_ADMIN_EMAIL = 'admin@tms.local';

/** Typed groups of settings, validated once at boot. The only reader of the process environment. */
export interface StompSettings {
  host: string;
  port: number;
  login?: string;
  passcode?: string;
  vhost?: string;
}

export interface LdapSettings {
  url: string;
  baseDn: string;
  managerDn: string;
  managerPassword: string;
  userSearchFilter: string;
  userSearchBase: string;
  groupSearchBase: string;
  groupSearchFilter: string;
  connectTimeoutMs: number;
  timeoutMs: number;
  startTls: boolean;
  caFile?: string;
  rejectUnauthorized: boolean;
}

export class AppConfig {
  readonly dataDir: string;
  readonly logLevel: string;
  /** text: Nest's lines, coloured only on a terminal; json: one JSON object a line, for a log collector. */
  readonly logFormat: 'text' | 'json';
  readonly http: {
    port: number;
    baseUrl: string;
    corsOrigins: string[];
    trustedProxies: string[];
    bodyLimit: string;
    /** SVC_BODY_LIMIT in bytes. */
    bodyLimitBytes: number;
    /** How long a whole request may take to arrive (SVC_HTTP_REQUEST_TIMEOUT), in milliseconds. */
    requestTimeoutMs: number;
  };
  /**
   * Report import: the size limit (received and unpacked, each), where a .zip is spooled, and how many imports
   * one user may run at once.
   */
  readonly import: { maxBytes: number; spoolDir: string; maxConcurrentPerUser: number };
  /** Failure signatures in the write path (off only in the benchmark). */
  readonly triage: { signatures: boolean };

  /** Retention (API.md, "Retention"): the cleanup's interval, the purge's batch size, pause and poll, in ms. */
  readonly retention: {
    intervalMs: number;
    batch: number;
    pauseMs: number;
    pausePercent: number;
    purgePollMs: number;
    /** SVC_V2_PENDING_TTL, in seconds. */
    pendingTtlSeconds: number;
  };
  /** Live updates: the ping interval; the sockets allowed per user, per address, unauthenticated per address. */
  readonly live: {
    pingIntervalMs: number;
    maxPerUser: number;
    maxPerAddress: number;
    maxUnauthenticatedPerAddress: number;
  };
  /** Directory login: set when SVC_AUTH_LDAP_ENABLED=true (every required variable then checked at boot). */
  readonly ldap?: LdapSettings;
  readonly db: {
    url?: string;
    poolSize: number;
    /** The longest a statement may run (SVC_DB_STATEMENT_TIMEOUT), in milliseconds; long writes opt out. */
    statementTimeoutMs: number;
    embeddedPort: number;
    embeddedDir: string;
  };
  readonly kv: { url?: string; prefix: string };
  readonly broker: { amqpUrl?: string; queue: string };
  /** The live-update relay: the broker's STOMP plugin when SVC_BROKER_STOMP_HOST is set, else in-process. */
  readonly relay: { stomp?: StompSettings; topic: string };
  readonly auth: {
    jwtSecret: string;
    accessTtlSeconds: number;
    refreshTtlSeconds: number;
    cookieSecure: boolean;
    loginPerMinute: number;
    loginFailuresPerAccountHour: number;
  };
  /**
   * The 256-bit key that encrypts secrets at rest (TOTP secrets) and keys the recovery-code hashes:
   * SVC_ENCRYPTION_KEY, or derived from SVC_JWT_SECRET with HKDF-SHA256 when unset (then rotating the JWT
   * secret makes enrolled authenticators unreadable: set SVC_ENCRYPTION_KEY in production).
   */
  readonly encryption: { key: Buffer; derived: boolean };
  readonly mail: {
    /** Unset: the embedded outbox (log + SVC_DATA_DIR/outbox/). */
    smtp?: { host: string; port: number; user?: string; pass?: string; rejectUnauthorized: boolean };
    from: Mailbox;
    outboxDir: string;
    perRecipientPerHour: number;
    productName: string;
  };
  readonly billing: { webhookSecret?: string };
  /** Test health kept as results are written (src/stability/); off only to measure what it costs (the bench). */
  readonly flakyDetection: boolean;
  /**
   * Whether a test's second plain pass is left unwritten (test-health.repository.ts, HealthWriteOptions); off while
   * replicas of a release before it still run (README, "Upgrading replicas one at a time").
   */
  readonly healthQuietSecondRun: boolean;
  /** Whether a replica remembers its projects' settled tests (src/stability/settled-tests.ts). */
  readonly healthSettledCache: boolean;
  /** Outbound webhooks: the retries' base delay, one attempt's timeout, whether private addresses are allowed. */
  readonly webhooks: { retryBaseSeconds: number; timeoutMs: number; allowPrivate: boolean };
  /**
   * Events owed by a committed change (src/notifications/pending.repository.ts): how long they wait for their own
   * replica before any replica's sweep announces them, and how often it sweeps.
   */
  readonly notify: { graceMs: number };
  readonly bootstrapAdmin?: { email: string; password: string; passwordFile?: string };
  /** Where generated secrets were written (dev defaults), for the boot log. */
  readonly generated: string[] = [];

  constructor(env: EnvironmentVariables, options: LoadOptions = {}) {
    this.dataDir = resolve(env.SVC_DATA_DIR);
    this.logLevel = env.SVC_LOG_LEVEL;
    this.logFormat = env.SVC_LOG_FORMAT;
    this.http = {
      port: env.PORT,
      baseUrl: (env.SVC_BASE_URL ?? `http://localhost:${env.PORT}`).replace(/\/+$/, ''),
      corsOrigins: list(env.SVC_CORS_ORIGINS),
      trustedProxies: list(env.SVC_TRUSTED_PROXIES),
      bodyLimit: env.SVC_BODY_LIMIT,
      bodyLimitBytes: byteSize(env.SVC_BODY_LIMIT, 'SVC_BODY_LIMIT'),
      requestTimeoutMs: parseDurationSeconds(env.SVC_HTTP_REQUEST_TIMEOUT)! * 1000,
    };
    this.live = {
      pingIntervalMs: parseDurationSeconds(env.SVC_WS_PING_INTERVAL)! * 1000,
      maxPerUser: env.SVC_WS_MAX_PER_USER,
      maxPerAddress: env.SVC_WS_MAX_PER_ADDRESS,
      maxUnauthenticatedPerAddress: env.SVC_WS_MAX_UNAUTHENTICATED_PER_ADDRESS,
    };
    this.retention = {
      intervalMs: parseDurationSeconds(env.SVC_RETENTION_INTERVAL)! * 1000,
      batch: env.SVC_RETENTION_BATCH,
      pauseMs: env.SVC_RETENTION_PAUSE_MS,
      pausePercent: env.SVC_RETENTION_PAUSE_PERCENT,
      purgePollMs: parseDurationSeconds(env.SVC_RETENTION_PURGE_POLL)! * 1000,
      pendingTtlSeconds: parseDurationSeconds(env.SVC_V2_PENDING_TTL)!,
    };
    this.import = {
      maxBytes: byteSize(env.SVC_IMPORT_MAX_BYTES, 'SVC_IMPORT_MAX_BYTES'),
      spoolDir: join(this.dataDir, 'import'),
      maxConcurrentPerUser: env.SVC_IMPORT_MAX_CONCURRENT_PER_USER,
    };
    this.db = {
      url: env.SVC_DB_URL,
      poolSize: env.SVC_DB_POOL_SIZE,
      statementTimeoutMs: parseDurationSeconds(env.SVC_DB_STATEMENT_TIMEOUT)! * 1000,
      embeddedPort: env.SVC_EMBEDDED_DB_PORT,
      embeddedDir: join(this.dataDir, 'postgres'),
    };
    this.kv = { url: env.SVC_KVSTORE_URL, prefix: env.SVC_KVSTORE_PREFIX };
    this.broker = { amqpUrl: env.SVC_BROKER_AMQP_URL, queue: env.SVC_BROKER_QUEUE };
    this.relay = {
      stomp: env.SVC_BROKER_STOMP_HOST
        ? {
            host: env.SVC_BROKER_STOMP_HOST,
            port: env.SVC_BROKER_STOMP_PORT,
            login: env.SVC_BROKER_STOMP_LOGIN,
            passcode: env.SVC_BROKER_STOMP_PASSCODE,
            vhost: env.SVC_BROKER_STOMP_VHOST,
          }
        : undefined,
      topic: env.SVC_BROKER_STOMP_TOPIC,
    };

    this.mail = {
      smtp: env.SMTP_HOST
        ? {
            host: env.SMTP_HOST,
            port: env.SMTP_PORT ?? 587,
            user: env.SMTP_USER || undefined,
            pass: env.SMTP_PASS || undefined,
            rejectUnauthorized: env.SVC_SMTP_TLS_REJECT_UNAUTHORIZED,
          }
        : undefined,
      from: parseMailbox(
        env.MAIL_FROM ?? `${env.SVC_PRODUCT_NAME} <noreply@${hostOf(this.http.baseUrl)}>`,
      ) ?? {
        address: 'noreply@localhost',
      },
      outboxDir: join(this.dataDir, 'outbox'),
      perRecipientPerHour: env.SVC_MAIL_RATE_PER_RECIPIENT,
      productName: env.SVC_PRODUCT_NAME,
    };
    if (env.SMTP_HOST && Boolean(env.SMTP_USER) !== Boolean(env.SMTP_PASS)) {
      throw new ConfigError(
        'SMTP_USER and SMTP_PASS must be set together, or both left empty for a relay without authentication',
      );
    }
    this.billing = { webhookSecret: env.SVC_BILLING_WEBHOOK_SECRET };
    this.flakyDetection = env.SVC_FLAKY_DETECTION;
    this.healthQuietSecondRun = env.SVC_HEALTH_QUIET_SECOND_RUN;
    this.healthSettledCache = env.SVC_HEALTH_SETTLED_CACHE;
    this.triage = { signatures: env.SVC_TRIAGE_SIGNATURES };
    this.webhooks = {
      retryBaseSeconds: parseDurationSeconds(env.SVC_WEBHOOK_RETRY_BASE)!,
      timeoutMs: parseDurationSeconds(env.SVC_WEBHOOK_TIMEOUT)! * 1000,
      allowPrivate: env.SVC_WEBHOOK_ALLOW_PRIVATE,
    };
    this.notify = { graceMs: parseDurationSeconds(env.SVC_NOTIFY_GRACE)! * 1000 };
    this.ldap = env.SVC_AUTH_LDAP_ENABLED ? ldapSettings(env) : undefined;

    let jwtSecret = env.SVC_JWT_SECRET;
    if (!jwtSecret && options.devDefaults) {
      jwtSecret = this.keptSecret('jwt-secret', () => randomBytes(48).toString('base64url'));
    }
    if (!jwtSecret) {
      throw new ConfigError('SVC_JWT_SECRET is required and must be at least 32 bytes long');
    }
    this.auth = {
      jwtSecret,
      accessTtlSeconds: parseDurationSeconds(env.SVC_ACCESS_TTL)!,
      refreshTtlSeconds: parseDurationSeconds(env.SVC_REFRESH_TTL)!,
      cookieSecure: env.SVC_COOKIE_SECURE,
      loginPerMinute: env.SVC_LOGIN_RATE_PER_MINUTE,
      loginFailuresPerAccountHour: env.SVC_LOGIN_FAILURES_PER_ACCOUNT_HOUR,
    };
    const explicitKey = env.SVC_ENCRYPTION_KEY ? decodeKey256(env.SVC_ENCRYPTION_KEY) : undefined;
    this.encryption = explicitKey
      ? { key: explicitKey, derived: false }
      : { key: deriveEncryptionKey(jwtSecret), derived: true };

    if (env.SVC_BOOTSTRAP_ADMIN_EMAIL && env.SVC_BOOTSTRAP_ADMIN_PASSWORD) {
      this.bootstrapAdmin = {
        email: env.SVC_BOOTSTRAP_ADMIN_EMAIL,
        password: env.SVC_BOOTSTRAP_ADMIN_PASSWORD,
      };
    } else if (env.SVC_BOOTSTRAP_ADMIN_EMAIL || env.SVC_BOOTSTRAP_ADMIN_PASSWORD) {
      throw new ConfigError(
        'SVC_BOOTSTRAP_ADMIN_EMAIL and SVC_BOOTSTRAP_ADMIN_PASSWORD must be set together',
      );
    } else if (options.devDefaults) {
      const passwordFile = join(this.dataDir, 'secrets', 'bootstrap-admin-password');
      const password = this.keptSecret('bootstrap-admin-password', () =>
        randomBytes(18).toString('base64url'),
      );
      this.bootstrapAdmin = { email: DEV_ADMIN_EMAIL, password, passwordFile };
    }
  }

  /** Validates `env` against the schema; throws a ConfigError naming every bad variable. */
  static load(env: Record<string, string | undefined>, options: LoadOptions = {}): AppConfig {
    const known = Object.fromEntries(
      // An empty variable means the same as an unset one: its default, or the embedded counterpart.
      Object.entries(env).filter(([key, value]) => isOurs(key) && value !== ''),
    );
    const parsed = plainToInstance(EnvironmentVariables, known);
    const errors = validateSync(parsed, { whitelist: true });
    if (errors.length) {
      throw new ConfigError(`Invalid configuration: ${describe(errors)}`);
    }
    return new AppConfig(parsed, options);
  }

  private keptSecret(name: string, generate: () => string): string {
    const { value, created } = keptSecret(this.dataDir, name, generate);
    if (created) {
      this.generated.push(join(this.dataDir, 'secrets', name));
    }
    return value;
  }
}

/** HKDF-SHA256 of the JWT secret, with a fixed salt and purpose so it never equals the signing key. */
export function deriveEncryptionKey(jwtSecret: string): Buffer {
  return Buffer.from(hkdfSync('sha256', jwtSecret, 'tms encryption key', 'tms/at-rest/v1', 32));
}

/** Reads a secret kept in SVC_DATA_DIR/secrets, generating and storing it (mode 0600) on first use. */
export function keptSecret(
  dataDir: string,
  name: string,
  generate: () => string,
): { value: string; created: boolean } {
  const dir = join(dataDir, 'secrets');
  const file = join(dir, name);
  if (existsSync(file)) {
    return { value: readFileSync(file, 'utf8').trim(), created: false };
  }
  const value = generate();
  try {
    // The data dir itself stays traversable: the embedded PostgreSQL runs as another user beneath it.
    mkdirSync(dataDir, { recursive: true });
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    writeFileSync(file, `${value}\n`, { mode: 0o600 });
    chmodSync(file, 0o600);
  } catch (error) {
    throw new ConfigError(
      `SVC_DATA_DIR (${dataDir}) must be a directory this process can write: ${(error as Error).message}`,
      { cause: error },
    );
  }
  return { value, created: true };
}

const isOurs = (key: string): boolean =>
  key === 'PORT' || key === 'MAIL_FROM' || key.startsWith('SVC_') || key.startsWith('SMTP_');

function hostOf(url: string): string {
  const host = new URL(url).hostname;
  // A mailbox needs a domain with a dot for most relays; localhost stays as it is for the embedded outbox.
  return host || 'localhost';
}

/** `10mb`, `512kb`, `1048576`: a size as body-parser reads it, in bytes; a ConfigError naming `name` otherwise. */
function byteSize(text: string, name: string): number {
  const match = /^(\d+(?:\.\d+)?)\s*(b|kb|mb|gb)?$/i.exec(text.trim());
  const size = match
    ? Math.floor(Number(match[1]) * 1024 ** ['b', 'kb', 'mb', 'gb'].indexOf((match[2] ?? 'b').toLowerCase()))
    : NaN;
  if (!Number.isSafeInteger(size) || size < 1) {
    throw new ConfigError(`${name} must be a size such as 10mb, 512kb or a number of bytes`);
  }
  return size;
}

function list(text: string): string[] {
  return text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

function describe(errors: ValidationError[]): string {
  return errors
    .map((e) => Object.values(e.constraints ?? {}).join(', ') || `${e.property} is invalid`)
    .join('; ');
}

/** Directory login's settings, refusing to start without a required one (spec, "Directory login"). */
function ldapSettings(env: EnvironmentVariables): LdapSettings {
  const required = [
    'SVC_LDAP_URL',
    'SVC_LDAP_BASE_DN',
    'SVC_LDAP_MANAGER_DN',
    'SVC_LDAP_MANAGER_PASSWORD',
    'SVC_LDAP_USER_SEARCH_FILTER',
  ] as const;
  const missing = required.filter((name) => !env[name]);
  if (missing.length) {
    throw new ConfigError(`SVC_AUTH_LDAP_ENABLED=true needs ${missing.join(', ')}`);
  }
  if (env.SVC_LDAP_STARTTLS && env.SVC_LDAP_URL!.toLowerCase().startsWith('ldaps:')) {
    throw new ConfigError('SVC_LDAP_STARTTLS applies to ldap:// only: ldaps:// is TLS from the start');
  }
  return {
    url: env.SVC_LDAP_URL!.replace(/\/$/, ''),
    baseDn: env.SVC_LDAP_BASE_DN!,
    managerDn: env.SVC_LDAP_MANAGER_DN!,
    managerPassword: env.SVC_LDAP_MANAGER_PASSWORD!,
    userSearchFilter: env.SVC_LDAP_USER_SEARCH_FILTER!,
    userSearchBase: env.SVC_LDAP_USER_SEARCH_BASE ?? env.SVC_LDAP_BASE_DN!,
    groupSearchBase: env.SVC_LDAP_GROUP_SEARCH_BASE ?? env.SVC_LDAP_BASE_DN!,
    groupSearchFilter: env.SVC_LDAP_GROUP_SEARCH_FILTER,
    connectTimeoutMs: parseDurationSeconds(env.SVC_LDAP_CONNECT_TIMEOUT)! * 1000,
    timeoutMs: parseDurationSeconds(env.SVC_LDAP_TIMEOUT)! * 1000,
    startTls: env.SVC_LDAP_STARTTLS,
    caFile: env.SVC_LDAP_CA_FILE,
    rejectUnauthorized: env.SVC_LDAP_TLS_REJECT_UNAUTHORIZED,
  };
}
