import { createHash, randomBytes } from 'node:crypto';
import { Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { EventEmitter2 } from '@nestjs/event-emitter';
import { AUDIT_EVENT, AuditRecord } from '../audit/audit.events.js';
import { SessionsService } from '../auth/sessions.service.js';
import { AppError } from '../common/app-error.js';
import { isUniqueViolation } from '../common/db-errors.js';
import { KeyValueStore } from '../infra/kv/key-value-store.js';
import { MailService } from '../mail/mail.service.js';
import { SECURITY_NOTICE, securityNotice } from './account.events.js';
import { AccountTokenPurpose, AccountTokensRepository } from './account-tokens.repository.js';
import type { AcceptedDto, RegisterDto, TokenPasswordDto } from './dto/account.dto.js';
import { PasswordHasher } from './password-hasher.js';
import { assertAcceptablePassword } from './password-policy.js';
import { UserEntity } from './user.entity.js';
import { UsersRepository } from './users.repository.js';

const VERIFY_HOURS = 24;
const RESET_MINUTES = 60;
/** Reset emails per address and hour; more requests still get 202 and send nothing. */
const RESETS_PER_ADDRESS_HOUR = 3;
const INVALID_LINK = 'The link is invalid, has expired or was already used; request a new one';

const REGISTERED: AcceptedDto = {
  message: 'If this address can be registered, a verification email is on its way; follow its link to finish',
};
const RESET_REQUESTED: AcceptedDto = {
  message: 'If this address belongs to an account with a password, a reset email is on its way',
};

/**
 * Registration, email verification and password reset. The answers never reveal whether an address is
 * known; the mail goes out in the background (the request only stores it).
 */
@Injectable()
export class AccountService implements OnApplicationShutdown {
  private readonly logger = new Logger(AccountService.name);
  private readonly pending = new Set<Promise<void>>();

  constructor(
    private readonly users: UsersRepository,
    private readonly tokens: AccountTokensRepository,
    private readonly hasher: PasswordHasher,
    private readonly sessions: SessionsService,
    private readonly mail: MailService,
    private readonly kv: KeyValueStore,
    private readonly events: EventEmitter2,
  ) {}

  /**
   * Answers at once, the same for every address: what the address needs (a verification, a notice to its
   * owner) is done after the answer, so the answer's timing says nothing about the address either.
   */
  register(dto: RegisterDto): AcceptedDto {
    this.afterAnswer('register', () =>
      this.registerAddress(dto.email.trim().toLowerCase(), dto.fullName.trim()),
    );
    return REGISTERED;
  }

  private async registerAddress(email: string, fullName: string): Promise<void> {
    const user = (await this.users.findByEmail(email)) ?? (await this.createUnverified(email, fullName));
    if (user.emailVerified || user.authSource !== 'LOCAL' || user.passwordHash) {
      // The address already has an account: tell its owner, tell the caller nothing.
      await this.mail.queue('account-exists', email, { fullName: user.fullName });
    } else if (user.enabled) {
      if (user.fullName !== fullName) {
        await this.users.update(user.id, { fullName });
      }
      const token = await this.issue(user.id, 'VERIFY_EMAIL', VERIFY_HOURS * 3600);
      await this.mail.queue('verification', email, { fullName, token, validHours: VERIFY_HOURS });
    }
  }

  async verifyEmail(dto: TokenPasswordDto, ip: string): Promise<void> {
    const user = await this.redeem('VERIFY_EMAIL', dto, async () => ({
      passwordHash: await this.hasher.hash(dto.password),
      emailVerified: true,
    }));
    this.audit({ type: 'EMAIL_VERIFIED', actorId: user.id, actorEmail: user.email, ip });
  }

  /** Answers at once, the same for every address, as register does. */
  forgotPassword(email: string): AcceptedDto {
    this.afterAnswer('forgot-password', () => this.sendReset(email.trim().toLowerCase()));
    return RESET_REQUESTED;
  }

  private async sendReset(address: string): Promise<void> {
    const requests = await this.kv.incrementWithTtl(`reset-requests:${address}`, 3600);
    if (requests > RESETS_PER_ADDRESS_HOUR) {
      this.logger.warn(
        `Password reset for ${address} not sent: ${RESETS_PER_ADDRESS_HOUR} requests per hour reached`,
      );
      return;
    }
    const user = await this.users.findByEmail(address);
    if (user?.enabled && user.authSource === 'LOCAL') {
      const token = await this.issue(user.id, 'RESET_PASSWORD', RESET_MINUTES * 60);
      await this.mail.queue('password-reset', address, {
        fullName: user.fullName,
        token,
        validMinutes: RESET_MINUTES,
      });
    }
  }

  async resetPassword(dto: TokenPasswordDto, ip: string): Promise<void> {
    const user = await this.redeem('RESET_PASSWORD', dto, async () => ({
      passwordHash: await this.hasher.hash(dto.password),
      // Following the link proves the mailbox as well as a verification would.
      emailVerified: true,
    }));
    // "Signs out every session": the refresh tokens and the access tokens already issued, on every replica.
    await this.sessions.endAll(user.id);
    await this.kv.delete(`login-failures:${user.email}`);
    this.audit({
      type: 'PASSWORD_RESET',
      actorId: user.id,
      actorEmail: user.email,
      ip,
      details: { sessionsRevoked: true },
    });
    this.events.emit(SECURITY_NOTICE, securityNotice('PASSWORD_CHANGED', user, ip));
  }

  /**
   * Checks the token and the new password (a weak password leaves the token usable), then uses the token
   * up and applies `changes` in one transaction: of two concurrent requests with one token, one wins.
   */
  private async redeem(
    purpose: AccountTokenPurpose,
    dto: TokenPasswordDto,
    changes: () => Promise<Partial<UserEntity>>,
  ): Promise<UserEntity> {
    const owner = await this.tokens.peek(purpose, digest(dto.token));
    if (!owner) {
      throw AppError.validation(INVALID_LINK);
    }
    // No such link is sent to a directory user; one from before the account came from the directory sets nothing.
    if ((await this.users.findById(owner.userId))?.authSource === 'LDAP') {
      throw AppError.conflict(
        `The directory owns the password of ${owner.email}: change it there, then sign in with it`,
      );
    }
    assertAcceptablePassword(dto.password, owner.email);
    const update = await changes();
    await this.tokens.transaction(async (tx) => {
      if (!(await this.tokens.consume(tx, owner.tokenId))) {
        throw AppError.validation(INVALID_LINK);
      }
      await tx.getRepository(UserEntity).update({ id: owner.userId }, update);
    });
    const user = await this.users.findById(owner.userId);
    return user!;
  }

  private async issue(userId: string, purpose: AccountTokenPurpose, validSeconds: number): Promise<string> {
    const token = randomBytes(32).toString('base64url');
    await this.tokens.replace(userId, purpose, digest(token), validSeconds);
    return token;
  }

  private async createUnverified(email: string, fullName: string): Promise<UserEntity> {
    try {
      return await this.users.save({
        email,
        fullName,
        passwordHash: null,
        authSource: 'LOCAL',
        emailVerified: false,
      });
    } catch (error) {
      // Two registrations of one new address at once: the other one created it.
      if (isUniqueViolation(error)) {
        return (await this.users.findByEmail(email))!;
      }
      throw error;
    }
  }

  /**
   * Runs `work` once the answer is on its way; a failure is logged (the caller was told nothing either way).
   * Shutdown waits for work still running.
   */
  private afterAnswer(what: string, work: () => Promise<void>): void {
    const done = new Promise<void>((resolve) => setImmediate(resolve))
      .then(work)
      .catch((error: unknown) =>
        this.logger.error(`${what} failed after the answer: ${(error as Error).message}`),
      )
      .finally(() => this.pending.delete(done));
    this.pending.add(done);
  }

  /** Resolves once the work owed after the answers given so far is done (shutdown waits for it). */
  async settled(): Promise<void> {
    await Promise.allSettled([...this.pending]);
  }

  onApplicationShutdown(): Promise<void> {
    return this.settled();
  }

  private audit(record: AuditRecord): void {
    this.events.emit(AUDIT_EVENT, record);
  }
}

function digest(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}
