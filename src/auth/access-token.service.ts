import { randomUUID } from 'node:crypto';
import { Injectable, Logger } from '@nestjs/common';
import type { Request } from 'express';
import { JwtService } from '@nestjs/jwt';
import { AppError } from '../common/app-error.js';
import type { AuthUser } from '../common/auth-user.js';
import { AppConfig } from '../config/app-config.js';
import { CacheInvalidation, type Invalidation } from '../infra/kv/cache-invalidation.js';
import { KeyValueStore } from '../infra/kv/key-value-store.js';
import { JwtStrategy } from './jwt.strategy.js';

const VERIFIED_MAX = 10_000;
/** Revoked ids and sessions kept in memory before the expired ones are swept out. */
const REVOKED_SWEEP_AT = 10_000;
/** How far ahead of this replica's clock a token's `iat` may be (another replica's clock). */
const CLOCK_SKEW_SECONDS = 30;
/** A user id as the database stores it: a positive bigint. */
const USER_ID = /^[1-9]\d{0,17}$/;

/**
 * Whether the claims are those this service issues (RFC 8725 §3.9, §3.10): of type `access`, a user id as
 * subject, numeric `exp` and `iat` (the signature check only tests `exp` when it is present, so a token without
 * one was accepted forever), an `iat` not in the future beyond the skew, and a `jti`. Anything else is a 401,
 * never a 400 from a value the database cannot take.
 */
export function isIssuedClaims(claims: Partial<AccessClaims>): claims is AccessClaims {
  return (
    claims.typ === 'access' &&
    typeof claims.sub === 'string' &&
    USER_ID.test(claims.sub) &&
    Number.isFinite(claims.exp) &&
    Number.isFinite(claims.iat) &&
    claims.iat! <= Date.now() / 1000 + CLOCK_SKEW_SECONDS &&
    typeof claims.jti === 'string' &&
    claims.jti.length > 0 &&
    // Tokens issued before these claims existed have neither (they are refused after a cut-off in their second).
    (claims.iat_ms === undefined ||
      (Number.isFinite(claims.iat_ms) && Math.floor(claims.iat_ms / 1000) === claims.iat)) &&
    (claims.sid === undefined || (typeof claims.sid === 'string' && claims.sid.length > 0))
  );
}

export interface AccessClaims {
  sub: string;
  jti: string;
  iat: number;
  exp: number;
  /**
   * When the token was issued, in epoch milliseconds (`iat` has whole seconds): compared with the user's
   * tokensValidAfter, so that a token issued in the second of a password reset is refused while one issued after
   * it is not.
   */
  iat_ms?: number;
  /** The sign-in session (refresh-token family) the token was issued to: logout revokes the session's tokens. */
  sid?: string;
  /** Distinguishes access tokens from other tokens signed with the same key (e.g. two-factor challenges). */
  typ: 'access';
}

/** What a checked token said: kept per token text until it expires. */
interface VerifiedToken {
  token: string;
  id: string;
  jti: string;
  exp: number;
  issuedAt: number;
  sid?: string;
}

/** A fresh principal object for every request: the guard sets `admin` on the one it gets. */
function principalOf(known: VerifiedToken): AccessPrincipal {
  return {
    user: { id: known.id, admin: false, via: 'JWT', credentialId: known.jti, issuedAt: known.issuedAt },
    exp: known.exp,
    sid: known.sid,
  };
}

/** What logout revokes: one token by its id, every token of a sign-in session, or both (until: epoch ms). */
export interface AccessRevocation {
  userId: string;
  jti?: string;
  sid?: string;
  until: number;
}

const revokedKey = (what: string): string => `access-revoked:${what}`;

export interface IssuedAccessToken {
  accessToken: string;
  tokenType: 'Bearer';
  expiresIn: number;
}

/** The principal of an access token, and when the token expires (epoch seconds). */
export interface AccessPrincipal {
  user: AuthUser;
  exp: number;
  /** The sign-in session the token belongs to (tokens issued before sessions were named have none). */
  sid?: string;
}

/**
 * Issues and checks access JWTs. Logout revokes tokens by id or session (revoke): in the key-value store until
 * they expire, and on every replica at once through CacheInvalidation, which drops them from each replica's
 * remembered tokens and adds them to its in-memory list of revoked ones. A request with a remembered token asks
 * nothing more (the hot path stays as fast as it was); a token seen for the first time on a replica is also looked
 * up in the store, for a replica that started after the revocation was broadcast.
 */
@Injectable()
export class AccessTokenService {
  private readonly logger = new Logger('AccessTokens');
  /** `jti:<id>` and `sid:<session>` revoked, with when the revocation may be forgotten (epoch ms). */
  private readonly revoked = new Map<string, number>();

  constructor(
    private readonly jwt: JwtService,
    private readonly config: AppConfig,
    private readonly strategy: JwtStrategy,
    private readonly kv: KeyValueStore,
    private readonly invalidation: CacheInvalidation,
  ) {
    invalidation.onInvalidate((event) => this.onInvalidate(event));
  }

  /**
   * The principal of a valid access token (HS256 only, unexpired, of type `access`), verified by its Passport
   * strategy (JwtStrategy); rejects with a 401 otherwise. A token the strategy accepted once is remembered until
   * it expires, and answered at once (no promise turn): the HMAC was the largest single cost of an authenticated
   * request, and a remembered token is still only ever matched by its exact text. Remembered under its signature,
   * the text's last segment: hashing 43 characters instead of the whole token for the look-up saved a tenth of
   * GET /me's own time; the whole text is then compared.
   */
  verify(token: string): AccessPrincipal | Promise<AccessPrincipal> {
    const signature = token.slice(token.lastIndexOf('.') + 1);
    const known = this.verified.get(signature);
    if (known && known.token === token && known.exp * 1000 > Date.now()) {
      return principalOf(known);
    }
    const req = { headers: { authorization: `Bearer ${token}` } } as Request;
    return this.strategy.verify(req).then(async (claims) => {
      const verified: VerifiedToken = {
        token,
        id: claims.sub,
        jti: claims.jti,
        exp: claims.exp,
        issuedAt: claims.iat_ms ?? claims.iat * 1000,
        sid: claims.sid,
      };
      await this.refuseIfRevoked(verified);
      // Checked again after the look-up: a revocation broadcast meanwhile must not be remembered over.
      if (this.isRevokedHere(verified)) {
        throw revokedError();
      }
      if (this.verified.size >= VERIFIED_MAX) {
        this.verified.clear();
      }
      this.verified.set(signature, verified);
      return principalOf(verified);
    });
  }

  /** Checked tokens by signature. */
  private readonly verified = new Map<string, VerifiedToken>();

  /**
   * A new access token. `session` names the sign-in session (refresh-token family) it belongs to; `notBefore` is
   * the user's tokensValidAfter as read for this sign-in: the token is issued after it even if this replica's
   * clock is behind the one that set it, so a sign-in right after a password reset is never refused.
   */
  async issue(
    userId: string,
    options: { session?: string; notBefore?: Date | null } = {},
  ): Promise<IssuedAccessToken> {
    const expiresIn = this.config.auth.accessTtlSeconds;
    const issuedAt = Math.max(Date.now(), (options.notBefore?.getTime() ?? 0) + 1);
    const accessToken = await this.jwt.signAsync(
      {
        sub: userId,
        typ: 'access',
        iat: Math.floor(issuedAt / 1000),
        iat_ms: issuedAt,
        ...(options.session ? { sid: options.session } : {}),
      },
      { jwtid: randomUUID(), expiresIn },
    );
    return { accessToken, tokenType: 'Bearer', expiresIn };
  }

  /**
   * Revokes one token (jti) and/or every token of a session (sid) until `until`, when they have all expired: in
   * the key-value store, then on every replica before resolving. Sockets opened with them are closed by LiveSockets,
   * which hears the same broadcast.
   */
  async revoke(revocation: AccessRevocation): Promise<void> {
    const ttlSeconds = Math.ceil((revocation.until - Date.now()) / 1000);
    if (ttlSeconds <= 0 || (!revocation.jti && !revocation.sid)) {
      return;
    }
    await Promise.all(keysOf(revocation).map((key) => this.kv.set(revokedKey(key), '1', ttlSeconds)));
    await this.invalidation.invalidate({ kind: 'access', ...revocation });
  }

  private onInvalidate(event: Invalidation): void {
    if (event.kind !== 'access') {
      return;
    }
    if (this.revoked.size >= REVOKED_SWEEP_AT) {
      const now = Date.now();
      for (const [key, until] of this.revoked) {
        if (until <= now) {
          this.revoked.delete(key);
        }
      }
    }
    for (const key of keysOf(event)) {
      this.revoked.set(key, event.until);
    }
    for (const [signature, known] of this.verified) {
      if (known.jti === event.jti || (event.sid !== undefined && known.sid === event.sid)) {
        this.verified.delete(signature);
      }
    }
  }

  private isRevokedHere(token: VerifiedToken): boolean {
    return (
      this.revoked.has(`jti:${token.jti}`) ||
      (token.sid !== undefined && this.revoked.has(`sid:${token.sid}`))
    );
  }

  /**
   * Refuses a revoked token: from this replica's list, else from the store (a replica that started after the
   * broadcast). Only tokens not yet remembered come here, once per token and replica. With the store unreachable the
   * token is let through, logged: every replica that was running heard the revocation itself.
   */
  private async refuseIfRevoked(token: VerifiedToken): Promise<void> {
    if (this.isRevokedHere(token)) {
      throw revokedError();
    }
    let found: (string | null)[];
    try {
      found = await Promise.all(keysOf(token).map((key) => this.kv.get(revokedKey(key))));
    } catch (error) {
      this.logger.warn(`could not look up whether an access token was revoked: ${(error as Error).message}`);
      return;
    }
    if (found.some((value) => value !== null)) {
      throw revokedError();
    }
  }
}

function keysOf(target: { jti?: string; sid?: string }): string[] {
  const keys: string[] = [];
  if (target.jti) {
    keys.push(`jti:${target.jti}`);
  }
  if (target.sid) {
    keys.push(`sid:${target.sid}`);
  }
  return keys;
}

function revokedError(): AppError {
  return AppError.unauthenticated('The access token was revoked (signed out); sign in again');
}
