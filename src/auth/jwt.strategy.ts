import { Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import { ExtractJwt, Strategy } from 'passport-jwt';
import type { AuthUser } from '../common/auth-user.js';
import { AppError } from '../common/app-error.js';
import { AppConfig } from '../config/app-config.js';
import { jwtKey } from './jwt-key.js';
import type { AccessClaims } from './access-token.service.js';

/** Verifies access JWTs: HS256 only, signature and expiry, and only tokens of type `access`. */
@Injectable()
export class JwtStrategy extends PassportStrategy(Strategy, 'jwt') {
  constructor(config: AppConfig) {
    super({
      jwtFromRequest: ExtractJwt.fromAuthHeaderAsBearerToken(),
      // A KeyObject: jsonwebtoken verifies ~40x faster than with the secret as a string.
      secretOrKey: jwtKey(config) as unknown as string,
      algorithms: ['HS256'],
      ignoreExpiration: false,
    });
  }

  validate(claims: AccessClaims): AuthUser {
    if (claims.typ !== 'access' || typeof claims.sub !== 'string' || !/^\d+$/.test(claims.sub)) {
      throw AppError.unauthenticated('The access token is invalid');
    }
    return { id: claims.sub, admin: false, via: 'JWT', credentialId: claims.jti };
  }
}
