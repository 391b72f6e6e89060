import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { JwtService } from '@nestjs/jwt';
import type { AuthUser } from '../common/auth-user.js';
import { AppConfig } from '../config/app-config.js';
import { JwtStrategy } from './jwt.strategy.js';

const VERIFIED_MAX = 10_000;
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
    claims.jti.length > 0
  );
}

export interface AccessClaims {
  sub: string;
  jti: string;
  iat: number;
  exp: number;
  /** Distinguishes access tokens from other tokens signed with the same key (e.g. two-factor challenges). */
  typ: 'access';
}

/** What a checked token said: kept per token text until it expires. */
interface VerifiedToken {
  token: string;
  id: string;
  jti: string;
  exp: number;
}

/** A fresh principal object for every request: the guard sets `admin` on the one it gets. */
function principalOf(known: VerifiedToken): AccessPrincipal {
  return { user: { id: known.id, admin: false, via: 'JWT', credentialId: known.jti }, exp: known.exp };
}

export interface IssuedAccessToken {
  accessToken: string;
  tokenType: 'Bearer';
  expiresIn: number;
}

/** The principal of an access token, and when the token expires (epoch seconds). */
export interface AccessPrincipal {
  user: AuthUser;
  exp: number;
}

@Injectable()
export class AccessTokenService {
  constructor(
    private readonly jwt: JwtService,
    private readonly config: AppConfig,
    private readonly strategy: JwtStrategy,
  ) {}

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
    return this.strategy.verify(req).then((claims) => {
      const verified: VerifiedToken = { token, id: claims.sub, jti: claims.jti, exp: claims.exp };
      if (this.verified.size >= VERIFIED_MAX) {
        this.verified.clear();
      }
      this.verified.set(signature, verified);
      return principalOf(verified);
    });
  }

  /** Checked tokens by signature. */
  private readonly verified = new Map<string, VerifiedToken>();

  async issue(userId: string): Promise<IssuedAccessToken> {
    const expiresIn = this.config.auth.accessTtlSeconds;
    const accessToken = await this.jwt.signAsync(
      { sub: userId, typ: 'access' },
      { jwtid: randomUUID(), expiresIn },
    );
    return { accessToken, tokenType: 'Bearer', expiresIn };
  }
}
