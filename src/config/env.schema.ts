import { Transform } from 'class-transformer';
import {
  IsBoolean,
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  IsUrl,
  Matches,
  Max,
  Min,
  MinLength,
  Validate,
  ValidationArguments,
  ValidatorConstraint,
  ValidatorConstraintInterface,
} from 'class-validator';
import { IsEmailAddress } from '../common/formats.js';
import { parseDurationSeconds } from './duration.js';
import { parseMailbox } from './mailbox.js';

@ValidatorConstraint({ name: 'duration' })
class IsDuration implements ValidatorConstraintInterface {
  validate(value: unknown): boolean {
    return typeof value === 'string' && parseDurationSeconds(value) !== undefined;
  }
  defaultMessage(): string {
    return '$property must be a duration such as 900, 15m, 12h or 30d';
  }
}

@ValidatorConstraint({ name: 'key256' })
class IsKey256 implements ValidatorConstraintInterface {
  validate(value: unknown): boolean {
    return typeof value === 'string' && decodeKey256(value) !== undefined;
  }
  defaultMessage(): string {
    return '$property must be 32 random bytes written as 64 hex characters or in base64 (openssl rand -base64 32)';
  }
}

/** A 256-bit key written as hex or base64 (standard or URL-safe), or undefined when it is not one. */
export function decodeKey256(text: string): Buffer | undefined {
  const value = text.trim();
  if (/^[0-9a-fA-F]{64}$/.test(value)) {
    return Buffer.from(value, 'hex');
  }
  if (/^[A-Za-z0-9+/_-]{43}=?$/.test(value)) {
    const key = Buffer.from(value, 'base64');
    return key.length === 32 ? key : undefined;
  }
  return undefined;
}

@ValidatorConstraint({ name: 'minBytes' })
class HasMinBytes implements ValidatorConstraintInterface {
  validate(value: unknown, args?: ValidationArguments): boolean {
    return typeof value === 'string' && Buffer.byteLength(value, 'utf8') >= Number(args?.constraints[0]);
  }
  defaultMessage(args?: ValidationArguments): string {
    return `$property must be at least ${args?.constraints[0]} bytes long`;
  }
}

/** `a@b.example` or `Name <a@b.example>`, one line. */
@ValidatorConstraint({ name: 'mailbox' })
class IsMailbox implements ValidatorConstraintInterface {
  validate(value: unknown): boolean {
    return typeof value === 'string' && parseMailbox(value) !== undefined;
  }
  defaultMessage(): string {
    return '$property must be an address such as noreply@example.com or "TMS <noreply@example.com>"';
  }
}

const toInt = ({ value }: { value: unknown }): unknown =>
  typeof value === 'string' && /^\d+$/.test(value.trim()) ? Number(value) : value;
const toBool = ({ value }: { value: unknown }): unknown =>
  value === 'true' || value === '1' ? true : value === 'false' || value === '0' ? false : value;
const emptyToUndefined = ({ value }: { value: unknown }): unknown => (value === '' ? undefined : value);

const DB_URL = { protocols: ['postgres', 'postgresql'], require_tld: false, require_protocol: true };
const REDIS_URL = { protocols: ['redis', 'rediss'], require_tld: false, require_protocol: true };
const AMQP_URL = { protocols: ['amqp', 'amqps'], require_tld: false, require_protocol: true };
const HTTP_URL = { protocols: ['http', 'https'], require_tld: false, require_protocol: true };

/**
 * Every environment variable the service reads. `.env.example` documents each with its default;
 * an unset optional variable selects the embedded counterpart (see DESIGN.md).
 */
export class EnvironmentVariables {
  @IsOptional() @Transform(toInt) @IsInt() @Min(1) @Max(65535)
  PORT: number = 8080;

  @IsOptional() @IsString()
  SVC_DATA_DIR: string = './data';

  @IsOptional() @Transform(emptyToUndefined) @IsUrl(HTTP_URL, { message: 'SVC_BASE_URL must be an http(s) URL' })
  SVC_BASE_URL?: string;

  @IsOptional() @Transform(emptyToUndefined) @IsIn(['error', 'warn', 'log', 'debug', 'verbose'])
  SVC_LOG_LEVEL: string = 'log';

  @IsOptional() @Transform(emptyToUndefined) @IsIn(['text', 'json'], { message: 'SVC_LOG_FORMAT must be text or json' })
  SVC_LOG_FORMAT: 'text' | 'json' = 'text';

  // ---- database ----
  @IsOptional() @Transform(emptyToUndefined) @IsUrl(DB_URL, { message: 'SVC_DB_URL must be a postgres:// URL' })
  SVC_DB_URL?: string;

  @IsOptional() @Transform(toInt) @IsInt() @Min(1) @Max(500)
  SVC_DB_POOL_SIZE: number = 20;

  @IsOptional() @Transform(toInt) @IsInt() @Min(1) @Max(65535)
  SVC_EMBEDDED_DB_PORT: number = 54329;

  // ---- key-value store ----
  @IsOptional() @Transform(emptyToUndefined) @IsUrl(REDIS_URL, { message: 'SVC_KVSTORE_URL must be a redis:// URL' })
  SVC_KVSTORE_URL?: string;

  @IsOptional() @IsString()
  SVC_KVSTORE_PREFIX: string = 'tms:';

  // ---- V2 ingest queue ----
  @IsOptional() @Transform(emptyToUndefined) @IsUrl(AMQP_URL, { message: 'SVC_BROKER_AMQP_URL must be an amqp:// or amqps:// URL' })
  SVC_BROKER_AMQP_URL?: string;

  @IsOptional() @IsString()
  SVC_BROKER_QUEUE: string = 'tms.ingest';

  /**
   * The longest one SQL statement may run (PostgreSQL's statement_timeout on the pool's connections); then it is
   * cancelled and the request answers 503. Imports and migrations are exempt; deletes of runs and projects are
   * bounded batches (SVC_RETENTION_BATCH) that stay well within it.
   */
  @IsOptional()
  @Validate(IsDuration)
  SVC_DB_STATEMENT_TIMEOUT: string = '30s';

  // ---- retention (API.md, "Retention") ----
  /** How often the retention cleanup runs (one replica at a time, project by project). */
  @IsOptional() @Validate(IsDuration)
  SVC_RETENTION_INTERVAL: string = '1h';

  /** Results deleted per transaction by the cleanup and by the purge of deleted runs and projects. */
  @IsOptional() @Transform(toInt) @IsInt() @Min(1) @Max(100000)
  SVC_RETENTION_BATCH: number = 5000;

  /**
   * The pause after each such batch, so concurrent ingest keeps its latency: at least this many milliseconds, and at
   * least SVC_RETENTION_PAUSE_PERCENT of the time the batch itself took (a slower database, a longer pause).
   */
  @IsOptional() @Transform(toInt) @IsInt() @Min(0) @Max(60000)
  SVC_RETENTION_PAUSE_MS: number = 10;

  /** See SVC_RETENTION_PAUSE_MS: the pause after a batch as a share of the batch's own time, in percent. */
  @IsOptional() @Transform(toInt) @IsInt() @Min(0) @Max(1000)
  SVC_RETENTION_PAUSE_PERCENT: number = 20;

  /** How often each replica looks for deleted runs and projects whose results are still to purge. */
  @IsOptional() @Validate(IsDuration)
  SVC_RETENTION_PURGE_POLL: string = '10s';

  /**
   * How long V2 results and finishes sent before their run wait for it (API.md: results may arrive first): the
   * cleanup drops those older, so that a run never created (a mistyped UUID, a deleted run's late results) does not
   * keep them for good.
   */
  @IsOptional() @Validate(IsDuration)
  SVC_V2_PENDING_TTL: string = '7d';

  // ---- live-update relay (the broker's STOMP plugin) ----
  @IsOptional() @Transform(emptyToUndefined) @IsString()
  SVC_BROKER_STOMP_HOST?: string;

  @IsOptional() @Transform(toInt) @IsInt({ message: 'SVC_BROKER_STOMP_PORT must be a port number' }) @Min(1) @Max(65535)
  SVC_BROKER_STOMP_PORT: number = 61613;

  @IsOptional() @Transform(emptyToUndefined) @IsString()
  SVC_BROKER_STOMP_LOGIN?: string;

  @IsOptional() @Transform(emptyToUndefined) @IsString()
  SVC_BROKER_STOMP_PASSCODE?: string;

  @IsOptional() @Transform(emptyToUndefined) @IsString()
  SVC_BROKER_STOMP_VHOST?: string;

  @IsOptional() @Matches(/^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/, {
    message: 'SVC_BROKER_STOMP_TOPIC must be dot-separated words of letters, digits, - and _',
  })
  SVC_BROKER_STOMP_TOPIC: string = 'tms.live';

  // ---- directory login (LDAP / Active Directory) ----
  @IsOptional() @Transform(toBool) @IsBoolean({ message: 'SVC_AUTH_LDAP_ENABLED must be true or false' })
  SVC_AUTH_LDAP_ENABLED: boolean = false;

  @IsOptional() @IsString() @Matches(/^ldaps?:\/\/[^\s/?#]+\/?$/i, { message: 'SVC_LDAP_URL must be ldap://host[:port] or ldaps://host[:port]' })
  SVC_LDAP_URL?: string;

  @IsOptional() @IsString()
  SVC_LDAP_BASE_DN?: string;

  @IsOptional() @IsString()
  SVC_LDAP_MANAGER_DN?: string;

  @IsOptional() @IsString()
  SVC_LDAP_MANAGER_PASSWORD?: string;

  @IsOptional() @IsString() @Matches(/^\(.*\{0\}.*\)$/s, { message: 'SVC_LDAP_USER_SEARCH_FILTER must be a filter in parentheses with {0} for the user name, e.g. (uid={0})' })
  SVC_LDAP_USER_SEARCH_FILTER?: string;

  @IsOptional() @IsString()
  SVC_LDAP_USER_SEARCH_BASE?: string;

  @IsOptional() @IsString()
  SVC_LDAP_GROUP_SEARCH_BASE?: string;

  @IsOptional() @IsString() @Matches(/^\(.*\{0\}.*\)$/s, { message: "SVC_LDAP_GROUP_SEARCH_FILTER must be a filter in parentheses with {0} for the user's DN, e.g. (member={0})" })
  SVC_LDAP_GROUP_SEARCH_FILTER: string = '(member={0})';

  @IsOptional() @Validate(IsDuration)
  SVC_LDAP_CONNECT_TIMEOUT: string = '5s';

  @IsOptional() @Validate(IsDuration)
  SVC_LDAP_TIMEOUT: string = '5s';

  @IsOptional() @Transform(toBool) @IsBoolean({ message: 'SVC_LDAP_STARTTLS must be true or false' })
  SVC_LDAP_STARTTLS: boolean = false;

  @IsOptional() @IsString()
  SVC_LDAP_CA_FILE?: string;

  @IsOptional() @Transform(toBool) @IsBoolean({ message: 'SVC_LDAP_TLS_REJECT_UNAUTHORIZED must be true or false' })
  SVC_LDAP_TLS_REJECT_UNAUTHORIZED: boolean = true;

  // ---- sign-in ----
  @IsOptional() @Transform(emptyToUndefined) @IsString() @Validate(HasMinBytes, [32])
  SVC_JWT_SECRET?: string;

  @IsOptional() @Validate(IsDuration)
  SVC_ACCESS_TTL: string = '15m';

  @IsOptional() @Validate(IsDuration)
  SVC_REFRESH_TTL: string = '30d';

  @IsOptional() @Transform(toBool) @IsBoolean({ message: 'SVC_COOKIE_SECURE must be true or false' })
  SVC_COOKIE_SECURE: boolean = true;

  @IsOptional() @Transform(toBool) @IsBoolean({ message: 'SVC_FLAKY_DETECTION must be true or false' })
  SVC_FLAKY_DETECTION: boolean = true;

  @IsOptional() @Transform(toBool) @IsBoolean({ message: 'SVC_HEALTH_QUIET_SECOND_RUN must be true or false' })
  SVC_HEALTH_QUIET_SECOND_RUN: boolean = true;

  @IsOptional() @Transform(toBool) @IsBoolean({ message: 'SVC_HEALTH_SETTLED_CACHE must be true or false' })
  SVC_HEALTH_SETTLED_CACHE: boolean = true;

  @IsOptional() @Transform(emptyToUndefined) @IsEmailAddress({ message: 'SVC_BOOTSTRAP_ADMIN_EMAIL must be an email address' })
  SVC_BOOTSTRAP_ADMIN_EMAIL?: string;

  @IsOptional() @Transform(emptyToUndefined) @IsString() @MinLength(12, { message: 'SVC_BOOTSTRAP_ADMIN_PASSWORD must be at least 12 characters' })
  SVC_BOOTSTRAP_ADMIN_PASSWORD?: string;

  @IsOptional() @Transform(toInt) @IsInt() @Min(1)
  SVC_LOGIN_RATE_PER_MINUTE: number = 60;

  @IsOptional() @Transform(toInt) @IsInt() @Min(1)
  SVC_LOGIN_FAILURES_PER_ACCOUNT_HOUR: number = 100;

  /** 32 bytes as 64 hex characters or base64; unset: derived from SVC_JWT_SECRET with HKDF. */
  @IsOptional() @Transform(emptyToUndefined) @IsString() @Validate(IsKey256)
  SVC_ENCRYPTION_KEY?: string;

  // ---- HTTP edge ----
  @IsOptional() @IsString()
  SVC_CORS_ORIGINS: string = '';

  @IsOptional() @IsString()
  SVC_TRUSTED_PROXIES: string = '';

  @IsOptional() @IsString()
  SVC_BODY_LIMIT: string = '10mb';

  /** How long a whole request (headers and body) may take to arrive; then 408. */
  @IsOptional() @Validate(IsDuration)
  SVC_HTTP_REQUEST_TIMEOUT: string = '60s';

  /** How often live-update sockets are pinged; one that has not answered the previous ping is closed. */
  @IsOptional() @Validate(IsDuration)
  SVC_WS_PING_INTERVAL: string = '30s';

  /** Live-update sockets one user may hold open on a replica; beyond it a socket is closed with 4429. */
  @IsOptional() @Transform(toInt) @IsInt() @Min(1)
  SVC_WS_MAX_PER_USER: number = 100;

  /** Live-update sockets one client address may hold open on a replica, authenticated or not. */
  @IsOptional() @Transform(toInt) @IsInt() @Min(1)
  SVC_WS_MAX_PER_ADDRESS: number = 200;

  /** Of those, sockets that have not authenticated yet (each may wait 10 s for its `auth`). */
  @IsOptional() @Transform(toInt) @IsInt() @Min(1)
  SVC_WS_MAX_UNAUTHENTICATED_PER_ADDRESS: number = 20;

  // ---- report import ----
  /** Bytes received and bytes unpacked, each, of one import (`256mb`, `1gb` or a number of bytes). */
  @IsOptional() @IsString()
  SVC_IMPORT_MAX_BYTES: string = '256mb';

  /** Imports one user (with any of their tokens) may run at once, across replicas; the next gets 429. */
  @IsOptional() @Transform(toInt) @IsInt({ message: 'SVC_IMPORT_MAX_CONCURRENT_PER_USER must be a whole number' }) @Min(1) @Max(100)
  SVC_IMPORT_MAX_CONCURRENT_PER_USER: number = 2;

  /** Failure signatures in the write path; false only for the benchmark, to measure what they cost. */
  @IsOptional() @Transform(toBool) @IsBoolean({ message: 'SVC_TRIAGE_SIGNATURES must be true or false' })
  SVC_TRIAGE_SIGNATURES: boolean = true;

  // ---- outbound mail (SMTP; unset SMTP_HOST = messages go to the log and SVC_DATA_DIR/outbox/) ----
  @IsOptional() @Transform(emptyToUndefined) @IsString() @Matches(/^[A-Za-z0-9.:[\]-]+$/, { message: 'SMTP_HOST must be a host name or address' })
  SMTP_HOST?: string;

  @IsOptional() @Transform(toInt) @IsInt({ message: 'SMTP_PORT must be a port number' }) @Min(1) @Max(65535)
  SMTP_PORT?: number;

  @IsOptional() @IsString()
  SMTP_USER?: string;

  @IsOptional() @IsString()
  SMTP_PASS?: string;

  @IsOptional() @Transform(emptyToUndefined) @IsString() @Validate(IsMailbox)
  MAIL_FROM?: string;

  @IsOptional() @Transform(toBool) @IsBoolean({ message: 'SVC_SMTP_TLS_REJECT_UNAUTHORIZED must be true or false' })
  SVC_SMTP_TLS_REJECT_UNAUTHORIZED: boolean = true;

  @IsOptional() @Transform(toInt) @IsInt() @Min(1)
  SVC_MAIL_RATE_PER_RECIPIENT: number = 5;

  @IsOptional() @IsString() @Matches(/^[^\r\n]{1,80}$/, { message: 'SVC_PRODUCT_NAME must be one line of at most 80 characters' })
  SVC_PRODUCT_NAME: string = 'TMS';

  // ---- webhooks ----
  /** The first retry's delay; each next one doubles it (8 attempts in all). */
  @IsOptional() @Validate(IsDuration)
  SVC_WEBHOOK_RETRY_BASE: string = '10s';

  /** How long one delivery attempt may wait for the receiver's answer. */
  @IsOptional() @Validate(IsDuration)
  SVC_WEBHOOK_TIMEOUT: string = '10s';

  /** true: webhooks may reach loopback, private, link-local and metadata addresses (tests, closed networks). */
  @IsOptional() @Transform(toBool) @IsBoolean({ message: 'SVC_WEBHOOK_ALLOW_PRIVATE must be true or false' })
  SVC_WEBHOOK_ALLOW_PRIVATE: boolean = false;

  /**
   * How long an event committed with the change that caused it (a run's finish, its gate FAILED, a test turned flaky
   * or quarantined) may wait for the replica that made the change to put it in the delivery outbox; after that any
   * replica's sweep does (it sweeps at start and this often). It covers a replica that died right after the commit.
   */
  @IsOptional() @Validate(IsDuration)
  SVC_NOTIFY_GRACE: string = '1m';

  // ---- billing ----
  @IsOptional() @Transform(emptyToUndefined) @IsString() @Validate(HasMinBytes, [16])
  SVC_BILLING_WEBHOOK_SECRET?: string;
}
