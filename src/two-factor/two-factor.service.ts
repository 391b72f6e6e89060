import { createHash, randomBytes } from 'node:crypto';
import { Injectable, Logger } from '@nestjs/common';
import { EventEmitter2 } from '@nestjs/event-emitter';
import QRCode from 'qrcode';
import { AUDIT_EVENT, AuditRecord } from '../audit/audit.events.js';
import { rateLimitAudit } from '../auth/rate-limit-audit.js';
import { AppError, ErrorCode } from '../common/app-error.js';
import { enforceWindowLimit, rateLimitedFor } from '../common/rate-limit.js';
import { AppConfig } from '../config/app-config.js';
import { KeyValueStore } from '../infra/kv/key-value-store.js';
import { SECURITY_NOTICE, securityNotice, SecurityNoticeKind } from '../users/account.events.js';
import type { UserEntity } from '../users/user.entity.js';
import { UserCache } from '../users/user-cache.js';
import { UsersRepository } from '../users/users.repository.js';
import type { EnrollmentDto, TwoFactorChallengeDto, TwoFactorStatusDto } from './dto/two-factor.dto.js';
import { newRecoveryCodes, normalizeRecoveryCode, RECOVERY_CODE_COUNT } from './recovery-codes.js';
import { Totp } from './totp.js';
import { TwoFactorCrypto, UnreadableSecretError } from './two-factor-crypto.js';
import { TwoFactorRepository, TwoFactorRow } from './two-factor.repository.js';

/** How long the password step's challenge stays valid. */
export const CHALLENGE_TTL_SECONDS = 300;
/** Second-step attempts per user and minute (counted only with a valid challenge), then 429 for 60 s. */
export const VERIFY_PER_MINUTE = 5;
/** Wrong second steps in a row after which every pending challenge of the user dies. */
export const FAILURES_BEFORE_REVOKE = 20;
/** Activate and disable attempts per user and minute. */
const CODE_CHECKS_PER_MINUTE = 5;
/** New enrolments per user and hour. */
const ENROLMENTS_PER_HOUR = 10;
const DAY_SECONDS = 86_400;

const BAD_CHALLENGE = 'The sign-in challenge is invalid, expired or already used; sign in again';
const ALREADY_ACTIVE = 'Two-factor authentication is already active';
const ENROL_WHILE_ACTIVE = `${ALREADY_ACTIVE}; disable it first to enrol a new device`;
const TOO_MANY_CODES = 'Too many attempts';
const WRONG_CODE = 'The code is wrong, expired or was already used';

export type SecondFactor = 'TOTP' | 'RECOVERY_CODE';

/**
 * TOTP two-factor authentication: enrolment (pending until a first valid code), the second login step with
 * its challenge, and disabling. Attempt counters, used challenges and challenge generations live in the
 * key-value store, so limits hold across replicas; time steps and recovery codes are used up in PostgreSQL.
 */
@Injectable()
export class TwoFactorService {
  private readonly logger = new Logger('TwoFactor');

  constructor(
    private readonly repository: TwoFactorRepository,
    private readonly totp: Totp,
    private readonly crypto: TwoFactorCrypto,
    private readonly users: UsersRepository,
    private readonly userCache: UserCache,
    private readonly kv: KeyValueStore,
    private readonly config: AppConfig,
    private readonly events: EventEmitter2,
  ) {}

  async status(userId: string): Promise<TwoFactorStatusDto> {
    const row = await this.repository.find(userId);
    return {
      enabled: row?.active ?? false,
      pending: row ? !row.active : false,
      recoveryCodesRemaining: row?.active ? await this.repository.remainingRecoveryCodes(userId) : 0,
    };
  }

  async enroll(userId: string): Promise<EnrollmentDto> {
    const user = await this.requireUser(userId);
    if (user.twoFactorEnabled) {
      throw AppError.conflict(ENROL_WHILE_ACTIVE);
    }
    await enforceWindowLimit(
      this.kv,
      `2fa-enroll:${userId}`,
      3_600_000,
      ENROLMENTS_PER_HOUR,
      'Too many enrolments',
    );
    const secret = this.totp.newSecret();
    const recoveryCodes = newRecoveryCodes();
    const hashes = recoveryCodes.map((code) => this.crypto.hashRecoveryCode(normalizeRecoveryCode(code)!));
    if (!(await this.repository.startEnrolment(userId, this.crypto.encrypt(secret, userId), hashes))) {
      throw AppError.conflict(ENROL_WHILE_ACTIVE);
    }
    const otpauthUrl = this.totp.uri(secret, this.config.mail.productName, user.email);
    const qrCodeDataUrl = await QRCode.toDataURL(otpauthUrl, {
      errorCorrectionLevel: 'M',
      margin: 2,
      width: 240,
    });
    return { secret, otpauthUrl, qrCodeDataUrl, recoveryCodes };
  }

  async activate(userId: string, code: string, ip: string): Promise<void> {
    const user = await this.requireUser(userId);
    const row = await this.repository.find(userId);
    if (row?.active) {
      throw AppError.conflict(ALREADY_ACTIVE);
    }
    if (!row) {
      throw AppError.validation(
        'There is no enrolment to activate; start one with POST /api/auth/2fa/enroll',
      );
    }
    await this.limitPerUser(
      `2fa-code:${userId}`,
      CODE_CHECKS_PER_MINUTE,
      TOO_MANY_CODES,
      userId,
      ip,
      'POST /api/auth/2fa/activate',
    );
    const check = await this.totp.check(this.secretOf(row, userId), code, row.lastUsedStep);
    if (!check.valid) {
      this.audit({
        type: 'TWO_FACTOR_FAILURE',
        actorId: userId,
        actorEmail: user.email,
        ip,
        details: { action: 'activate', reason: check.reason },
      });
      throw AppError.validation('The code is not valid: check the device clock and enter the current code');
    }
    if (!(await this.repository.activate(userId, check.step))) {
      throw AppError.conflict(ALREADY_ACTIVE);
    }
    await this.userCache.invalidate(userId);
    this.audit({
      type: 'TWO_FACTOR_ENABLED',
      actorId: userId,
      actorEmail: user.email,
      ip,
      details: { recoveryCodes: RECOVERY_CODE_COUNT },
    });
    this.notify('TWO_FACTOR_ENABLED', user, ip);
  }

  async disable(userId: string, code: string, ip: string): Promise<void> {
    const user = await this.requireUser(userId);
    const row = await this.repository.find(userId);
    if (!row?.active) {
      throw AppError.conflict('Two-factor authentication is not active');
    }
    await this.limitPerUser(
      `2fa-code:${userId}`,
      CODE_CHECKS_PER_MINUTE,
      TOO_MANY_CODES,
      userId,
      ip,
      'POST /api/auth/2fa/disable',
    );
    const check = await this.totp.check(this.secretOf(row, userId), code, row.lastUsedStep);
    if (!check.valid || !(await this.repository.disable(userId, check.step))) {
      this.audit({
        type: 'TWO_FACTOR_FAILURE',
        actorId: userId,
        actorEmail: user.email,
        ip,
        details: { action: 'disable', reason: check.valid ? 'REPLAYED_CODE' : check.reason },
      });
      throw AppError.validation(
        `${WRONG_CODE}; disabling needs the current 6-digit code (not a recovery code)`,
      );
    }
    await this.userCache.invalidate(userId);
    this.audit({ type: 'TWO_FACTOR_DISABLED', actorId: userId, actorEmail: user.email, ip });
    this.notify('TWO_FACTOR_DISABLED', user, ip);
  }

  /** The answer of a password step that passed for a user with two-factor active: no access, a challenge. */
  async startChallenge(userId: string): Promise<TwoFactorChallengeDto> {
    const challengeToken = randomBytes(32).toString('base64url');
    const generation = await this.generation(userId);
    // With when it was issued: a password reset or a sign-out everywhere after it ends it (completeChallenge).
    await this.kv.set(
      challengeKey(challengeToken),
      `${userId}:${generation}:${Date.now()}`,
      CHALLENGE_TTL_SECONDS,
    );
    return { twoFactorRequired: true, challengeToken, expiresIn: CHALLENGE_TTL_SECONDS };
  }

  /**
   * The second login step: the challenge must be live and unused, the user within the attempt limit, and the
   * code the current TOTP (±1 step, not replayed) or an unused recovery code, which is used up. Returns the
   * user who passed; the challenge cannot serve another login.
   */
  async completeChallenge(
    challengeToken: string,
    code: string,
    ip: string,
  ): Promise<{ user: UserEntity; method: SecondFactor }> {
    const key = challengeKey(challengeToken);
    const value = await this.kv.get(key);
    const [userId, generation, issuedAt] = value?.split(':') ?? [];
    if (!userId || generation === undefined || (await this.generation(userId)) !== generation) {
      throw AppError.unauthenticated(BAD_CHALLENGE);
    }
    await this.limitPerUser(
      `2fa-verify:${userId}`,
      VERIFY_PER_MINUTE,
      'Too many two-factor attempts',
      userId,
      ip,
      'POST /api/auth/2fa/verify',
    );
    const user = await this.users.findById(userId);
    const row = user?.enabled ? await this.repository.find(userId) : null;
    if (!user || !row?.active) {
      throw AppError.unauthenticated(BAD_CHALLENGE);
    }
    // A challenge the password step gave before every session of the user was ended (a password reset): the old
    // password must lead nowhere now. (A challenge stored by a replica on the code before has no time: let through.)
    if (
      issuedAt !== undefined &&
      user.tokensValidAfter &&
      Number(issuedAt) < user.tokensValidAfter.getTime()
    ) {
      throw AppError.unauthenticated(BAD_CHALLENGE);
    }

    const method: SecondFactor = /^\d{6}$/.test(code.trim()) ? 'TOTP' : 'RECOVERY_CODE';
    const failure =
      method === 'TOTP'
        ? await this.useTotp(row, userId, code.trim())
        : await this.useRecoveryCode(userId, code);
    if (failure) {
      return this.failed(user, ip, failure);
    }
    // One login per challenge: of two requests racing with one challenge, one signs in.
    if (!(await this.kv.compareAndSwap(key, value!, 'used', CHALLENGE_TTL_SECONDS))) {
      throw AppError.unauthenticated(BAD_CHALLENGE);
    }
    await this.kv.delete(failuresKey(userId));
    if (method === 'RECOVERY_CODE') {
      const remaining = await this.repository.remainingRecoveryCodes(userId);
      this.audit({
        type: 'RECOVERY_CODE_USED',
        actorId: userId,
        actorEmail: user.email,
        ip,
        details: { remaining },
      });
    }
    return { user, method };
  }

  private async useTotp(row: TwoFactorRow, userId: string, code: string): Promise<string | undefined> {
    const check = await this.totp.check(this.secretOf(row, userId), code, row.lastUsedStep);
    if (!check.valid) {
      return check.reason;
    }
    // The step is used up atomically: the same code sent to two replicas at once signs in once.
    return (await this.repository.useStep(userId, check.step)) ? undefined : 'REPLAYED_CODE';
  }

  private async useRecoveryCode(userId: string, input: string): Promise<string | undefined> {
    const code = normalizeRecoveryCode(input);
    if (!code) {
      return 'WRONG_CODE';
    }
    return (await this.repository.useRecoveryCode(userId, this.crypto.hashRecoveryCode(code)))
      ? undefined
      : 'UNKNOWN_RECOVERY_CODE';
  }

  private async failed(user: UserEntity, ip: string, reason: string): Promise<never> {
    const failures = await this.kv.incrementWithTtl(failuresKey(user.id), DAY_SECONDS);
    const revoke = failures >= FAILURES_BEFORE_REVOKE;
    this.audit({
      type: 'TWO_FACTOR_FAILURE',
      actorId: user.id,
      actorEmail: user.email,
      ip,
      details: { reason, consecutiveFailures: failures, ...(revoke ? { challengesRevoked: true } : {}) },
    });
    if (revoke) {
      // A new generation: every challenge issued before now stops working; the next password step starts afresh.
      await this.kv.incrementWithTtl(generationKey(user.id), DAY_SECONDS);
      await this.kv.delete(failuresKey(user.id));
      this.logger.warn(
        `${failures} wrong second steps in a row for user ${user.id}: pending sign-ins revoked`,
      );
      throw AppError.unauthenticated('Too many wrong codes: this sign-in was cancelled; sign in again');
    }
    throw AppError.unauthenticated(WRONG_CODE);
  }

  /**
   * A minute's window of `perMinute` tries at `key` for the user (the second login step's; the code checks of
   * activation and disabling, which share one): beyond it, 429 saying `what`, the hit audited (RATE_LIMIT_HIT, one
   * row an hour with its count) and the first of a window logged.
   */
  private async limitPerUser(
    key: string,
    perMinute: number,
    what: string,
    userId: string,
    ip: string,
    route: string,
  ): Promise<void> {
    const hit = await this.kv.hitWindow(key, 60_000, perMinute, 60_000);
    if (!hit.isBlocked) {
      return;
    }
    if (hit.totalHits === perMinute + 1) {
      this.logger.warn(`Rate limit hit: user ${userId} from ${ip} on ${route}`);
    }
    this.audit(rateLimitAudit(ip, route, { scope: 'user', limit: perMinute }, { id: userId }));
    throw rateLimitedFor(hit.timeToBlockExpire, what);
  }

  /** The user's challenge generation; challenges of an earlier one are dead. */
  private async generation(userId: string): Promise<string> {
    return (await this.kv.get(generationKey(userId))) ?? '0';
  }

  private secretOf(row: TwoFactorRow, userId: string): string {
    try {
      return this.crypto.decrypt(row.secretEncrypted, userId);
    } catch (error) {
      if (error instanceof UnreadableSecretError) {
        this.logger.error(
          `The two-factor secret of user ${userId} does not decrypt: was SVC_ENCRYPTION_KEY (or SVC_JWT_SECRET) changed?`,
        );
        throw new AppError(
          ErrorCode.UNAVAILABLE,
          'Two-factor authentication is unavailable: the server cannot read the stored secret; contact an administrator',
        );
      }
      throw error;
    }
  }

  private async requireUser(userId: string): Promise<UserEntity> {
    const user = await this.users.findById(userId);
    if (!user?.enabled) {
      throw AppError.unauthenticated('The account no longer exists or is disabled');
    }
    return user;
  }

  private notify(kind: SecurityNoticeKind, user: UserEntity, ip: string): void {
    this.events.emit(SECURITY_NOTICE, securityNotice(kind, user, ip));
  }

  private audit(record: AuditRecord): void {
    this.events.emit(AUDIT_EVENT, record);
  }
}

function challengeKey(token: string): string {
  return `2fa-challenge:${createHash('sha256').update(token).digest('hex')}`;
}

const generationKey = (userId: string): string => `2fa-generation:${userId}`;
const failuresKey = (userId: string): string => `2fa-failures:${userId}`;
