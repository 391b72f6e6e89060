import { DirectoryLogin } from '../ldap/directory-login.service.js';
import { signInThroughDirectory } from '../ldap/ldap.strategy.js';
import { Injectable } from '@nestjs/common';
import { EventEmitter2 } from '@nestjs/event-emitter';
import { AUDIT_EVENT, AuditRecord } from '../audit/audit.events.js';
import { AppError } from '../common/app-error.js';
import { AppConfig } from '../config/app-config.js';
import { KeyValueStore } from '../infra/kv/key-value-store.js';
import { PasswordHasher } from '../users/password-hasher.js';
import type { UserEntity } from '../users/user.entity.js';
import { UserCache } from '../users/user-cache.js';
import { UsersRepository } from '../users/users.repository.js';
import { type AccessPrincipal, AccessTokenService, IssuedAccessToken } from './access-token.service.js';
import type { LoginDto } from './dto/login.dto.js';
import type { MeDto } from './dto/me.dto.js';
import { rateLimitAudit } from './rate-limit-audit.js';
import { rateLimitedFor } from '../common/rate-limit.js';
import { RefreshTokenService, sessionOf, sessionOfToken } from './refresh-token.service.js';
import type { TwoFactorChallengeDto, TwoFactorVerifyDto } from '../two-factor/dto/two-factor.dto.js';
import { TwoFactorService } from '../two-factor/two-factor.service.js';

export interface SignedIn {
  access: IssuedAccessToken;
  refreshToken: string;
}

const INVALID_CREDENTIALS = 'Invalid username or password';
const FAILURE_WINDOW_SECONDS = 3600;

@Injectable()
export class AuthService {
  /** One MeDto per cached row object: a cached row is never changed in place (a change replaces it). */
  private readonly meDtos = new WeakMap<UserEntity, MeDto>();

  constructor(
    private readonly users: UsersRepository,
    private readonly userCache: UserCache,
    private readonly hasher: PasswordHasher,
    private readonly accessTokens: AccessTokenService,
    private readonly refreshTokens: RefreshTokenService,
    private readonly kv: KeyValueStore,
    private readonly config: AppConfig,
    private readonly events: EventEmitter2,
    private readonly twoFactor: TwoFactorService,
    private readonly directory: DirectoryLogin,
  ) {}

  /** The password step: signed in, or (two-factor active) a challenge for the second step that grants nothing. */
  async login(dto: LoginDto, ip: string): Promise<SignedIn | TwoFactorChallengeDto> {
    const username = dto.username.trim().toLowerCase();
    const failuresKey = `login-failures:${username}`;
    const failures = Number((await this.kv.get(failuresKey)) ?? 0);
    if (failures >= this.config.auth.loginFailuresPerAccountHour) {
      this.audit(
        rateLimitAudit(ip, 'POST /api/auth/login', { scope: 'account', failures }, { email: username }),
      );
      // The counter's own lifetime: the lock lasts until the hour of failures has passed.
      throw rateLimitedFor(
        await this.kv.ttlSeconds(failuresKey),
        'Too many failed sign-ins for this account',
      );
    }

    let user = await this.users.findByEmail(username);
    let reason: string | undefined;
    if (this.directory.enabled && !(user?.authSource === 'LOCAL' && user.passwordHash)) {
      // Not a local account with a password (the bootstrap admin, local users): the directory decides.
      // Through Passport's `ldap` strategy (LdapStrategy, on ldapts).
      const outcome = await signInThroughDirectory(dto.username.trim(), dto.password, ip);
      if (typeof outcome === 'string') {
        reason = `directory: ${outcome}`;
      } else {
        user = outcome;
      }
    } else {
      reason = await this.checkPassword(user, dto.password);
    }
    if (reason) {
      await this.kv.incrementWithTtl(failuresKey, FAILURE_WINDOW_SECONDS);
      this.audit({ type: 'LOGIN_FAILURE', actorId: user?.id, actorEmail: username, ip, details: { reason } });
      throw AppError.unauthenticated(INVALID_CREDENTIALS);
    }
    if (user!.twoFactorEnabled) {
      return this.twoFactor.startChallenge(user!.id);
    }
    this.audit({ type: 'LOGIN_SUCCESS', actorId: user!.id, actorEmail: user!.email, ip });
    return this.signIn(user!);
  }

  /** The second step of a login with two-factor active. */
  async verifyTwoFactor(dto: TwoFactorVerifyDto, ip: string): Promise<SignedIn> {
    const { user, method } = await this.twoFactor.completeChallenge(dto.challengeToken, dto.code, ip);
    await this.kv.delete(`login-failures:${user.email}`);
    this.audit({
      type: 'LOGIN_SUCCESS',
      actorId: user.id,
      actorEmail: user.email,
      ip,
      details: { secondFactor: method },
    });
    return this.signIn(user);
  }

  async refresh(token: string | undefined, ip: string): Promise<SignedIn> {
    const outcome = await this.refreshTokens.rotate(token);
    if (outcome.kind === 'reused') {
      // The family is gone (rotate deleted it); so are the access tokens issued to its session, whoever holds them
      // (a thief's included), and their live sockets, as a logout ends them.
      await this.accessTokens.revoke({
        userId: outcome.userId,
        sid: sessionOf(outcome.familyId),
        until: Date.now() + this.config.auth.accessTtlSeconds * 1000,
      });
      this.audit({
        type: 'REFRESH_TOKEN_REUSE',
        actorId: outcome.userId,
        ip,
        details: { familyRevoked: true },
      });
      throw AppError.unauthenticated(
        'This refresh token was already used; its sessions are revoked, sign in again',
      );
    }
    if (outcome.kind === 'invalid') {
      throw AppError.unauthenticated('The refresh token is missing, expired or revoked; sign in again');
    }
    const user = await this.users.findById(outcome.userId);
    if (!user?.enabled) {
      await this.refreshTokens.revoke(outcome.token);
      throw AppError.unauthenticated('The account no longer exists or is disabled');
    }
    const access = await this.accessTokens.issue(user.id, {
      session: sessionOf(outcome.familyId),
      notBefore: user.tokensValidAfter,
    });
    return { access, refreshToken: outcome.token };
  }

  /**
   * Ends this sign-in session: the refresh cookie's family, every access token issued to it, and the access token
   * the request was sent with (an invalid or expired one is no reason to refuse a logout). Other sessions of the
   * user keep working; a password reset is what ends them all.
   */
  async logout(refreshToken: string | undefined, accessToken: string | undefined, ip: string): Promise<void> {
    const family = await this.refreshTokens.revoke(refreshToken);
    const access = accessToken ? await this.principalOf(accessToken) : undefined;
    // Every access token of the session has expired once a lifetime has passed from now.
    const sessionUntil = Date.now() + this.config.auth.accessTtlSeconds * 1000;
    if (family) {
      await this.accessTokens.revoke({ userId: family.userId, sid: family.session, until: sessionUntil });
    }
    if (access && access.sid !== family?.session) {
      await this.accessTokens.revoke({
        userId: access.user.id,
        jti: access.user.credentialId,
        until: access.exp * 1000,
      });
    }
    const userId = family?.userId ?? access?.user.id;
    if (userId) {
      this.audit({ type: 'LOGOUT', actorId: userId, ip });
    }
  }

  /** The access token's principal, or undefined when it is not a valid one. */
  private async principalOf(token: string): Promise<AccessPrincipal | undefined> {
    try {
      return await this.accessTokens.verify(token);
    } catch (error) {
      if (error instanceof AppError) {
        return undefined;
      }
      throw error;
    }
  }

  /** Synchronous while the user row is cached (the guard has just read it): GET /me is the hottest read. */
  me(userId: string): MeDto | Promise<MeDto> {
    return this.userCache.withUser(userId, (user) => this.meOf(user));
  }

  private meOf(user: UserEntity | null): MeDto {
    if (!user?.enabled) {
      throw AppError.unauthenticated('The account no longer exists or is disabled');
    }
    let dto = this.meDtos.get(user);
    if (!dto) {
      dto = Object.freeze(toMeDto(user));
      this.meDtos.set(user, dto);
    }
    return dto;
  }

  /** A new session: its refresh token, then an access token naming it (see AccessTokenService.issue). */
  private async signIn(user: UserEntity): Promise<SignedIn> {
    const refreshToken = await this.refreshTokens.issue(user.id);
    const access = await this.accessTokens.issue(user.id, {
      session: sessionOfToken(refreshToken),
      notBefore: user.tokensValidAfter,
    });
    return { access, refreshToken };
  }

  /** Why the password does not sign this user in, or undefined when it does. Same cost on every path. */
  private async checkPassword(user: UserEntity | null, password: string): Promise<string | undefined> {
    if (!user?.passwordHash) {
      await this.hasher.verifyDummy(password);
      return user ? 'no local password' : 'unknown user';
    }
    if (!(await this.hasher.verify(user.passwordHash, password))) {
      return 'wrong password';
    }
    return user.enabled ? undefined : 'account disabled';
  }

  private audit(record: AuditRecord): void {
    this.events.emit(AUDIT_EVENT, record);
  }
}

export function toMeDto(user: UserEntity): MeDto {
  return {
    id: Number(user.id),
    email: user.email,
    fullName: user.fullName,
    admin: user.admin,
    authSource: user.authSource,
    twoFactorEnabled: user.twoFactorEnabled,
    emailVerified: user.emailVerified,
    createdAt: user.createdAt.toISOString(),
  };
}
