import { Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import type { Request } from 'express';
import { ExtractJwt, Strategy } from 'passport-jwt';
import { AppError } from '../common/app-error.js';
import { AppConfig } from '../config/app-config.js';
import { type AccessClaims, isIssuedClaims } from './access-token.service.js';
import { jwtKey } from './jwt-key.js';
import { runStrategy } from './strategy-runner.js';

/** What the strategy hands back: the token's claims, checked. */
export type VerifiedAccess = Pick<AccessClaims, 'sub' | 'jti' | 'exp' | 'iat' | 'iat_ms' | 'sid'>;

/**
 * The access JWT's Passport strategy (passport-jwt): `Authorization: Bearer <jwt>`, HS256 only, with the key as a
 * KeyObject (jsonwebtoken's verify is several times faster with one than with the secret string), unexpired; then
 * the claims this service issues (`typ` access, a user id as subject, `exp`, `iat`, `jti`, optionally `iat_ms` and
 * `sid`: see isIssuedClaims).
 */
@Injectable()
export class JwtStrategy extends PassportStrategy(Strategy, 'jwt') {
  constructor(config: AppConfig) {
    super({
      jwtFromRequest: ExtractJwt.fromAuthHeaderAsBearerToken(),
      // jsonwebtoken takes a KeyObject (its verify is several times faster with one); the types say string | Buffer.
      secretOrKey: jwtKey(config) as unknown as Buffer,
      algorithms: ['HS256'],
      ignoreExpiration: false,
    });
  }

  validate(claims: Partial<AccessClaims>): VerifiedAccess {
    if (!isIssuedClaims(claims)) {
      throw AppError.unauthenticated('The access token is invalid');
    }
    return {
      sub: claims.sub,
      jti: claims.jti,
      exp: claims.exp,
      iat: claims.iat,
      iat_ms: claims.iat_ms,
      sid: claims.sid,
    };
  }

  /** Verifies the request's access token through this strategy. */
  verify(req: Request): Promise<VerifiedAccess> {
    return runStrategy<VerifiedAccess>(this, req, (challenge) =>
      (challenge as { name?: string } | undefined)?.name === 'TokenExpiredError'
        ? 'The access token has expired; refresh it'
        : 'The access token is invalid',
    );
  }
}
