import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { JwtService } from '@nestjs/jwt';
import { AppError } from '../common/app-error.js';
import type { AuthUser } from '../common/auth-user.js';
import { AppConfig } from '../config/app-config.js';

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
function isIssuedClaims(claims: Partial<AccessClaims>): claims is AccessClaims {
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

export interface IssuedAccessToken {
  accessToken: string;
  tokenType: 'Bearer';
  expiresIn: number;
}

@Injectable()
export class AccessTokenService {
  constructor(
    private readonly jwt: JwtService,
    private readonly config: AppConfig,
  ) {}

  /**
   * The principal of a valid access token (HS256 only, unexpired, of type `access`); throws 401 otherwise.
   * A token whose signature was checked once is remembered until it expires: the HMAC was the largest single
   * cost of an authenticated request, and a remembered token is still only ever matched by its exact text.
   * Remembered under its signature, the text's last segment: hashing 43 characters instead of the whole token
   * for the look-up saved a tenth of GET /me's own time; the whole text is then compared.
   */
  verify(token: string): AuthUser {
    return this.verifyWithExpiry(token).user;
  }

  /** As verify, with the token's expiry (epoch seconds): a WebSocket authenticated with it is closed then. */
  verifyWithExpiry(token: string): { user: AuthUser; exp: number } {
    const signature = token.slice(token.lastIndexOf('.') + 1);
    let known = this.verified.get(signature);
    if (!known || known.token !== token || known.exp * 1000 <= Date.now()) {
      known = this.verifySignature(token);
      if (this.verified.size >= VERIFIED_MAX) {
        this.verified.clear();
      }
      this.verified.set(signature, known);
    }
    return { user: { id: known.id, admin: false, via: 'JWT', credentialId: known.jti }, exp: known.exp };
  }

  /** Checked tokens by signature. */
  private readonly verified = new Map<string, VerifiedToken>();

  private verifySignature(token: string): VerifiedToken {
    let claims: AccessClaims;
    try {
      claims = this.jwt.verify<AccessClaims>(token);
    } catch (error) {
      const expired = (error as { name?: string }).name === 'TokenExpiredError';
      throw AppError.unauthenticated(expired ? 'The access token has expired; refresh it' : 'The access token is invalid');
    }
    if (!isIssuedClaims(claims)) {
      throw AppError.unauthenticated('The access token is invalid');
    }
    return { token, id: claims.sub, jti: claims.jti, exp: claims.exp };
  }

  async issue(userId: string): Promise<IssuedAccessToken> {
    const expiresIn = this.config.auth.accessTtlSeconds;
    const accessToken = await this.jwt.signAsync(
      { sub: userId, typ: 'access' },
      { jwtid: randomUUID(), expiresIn },
    );
    return { accessToken, tokenType: 'Bearer', expiresIn };
  }
}
