import { Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import type { Request } from 'express';
import { Strategy } from 'passport-http-bearer';
import { AppError } from '../common/app-error.js';
import type { AuthUser } from '../common/auth-user.js';
import { runStrategy } from '../auth/strategy-runner.js';
import { ApiTokenAuthenticator } from './api-token.authenticator.js';

const REFUSED = 'The API token is invalid, expired or revoked';

/** The API token's Passport strategy (passport-http-bearer): `Authorization: Bearer tms_…`. */
@Injectable()
export class ApiTokenStrategy extends PassportStrategy(Strategy, 'api-token') {
  constructor(private readonly authenticator: ApiTokenAuthenticator) {
    super();
  }

  async validate(token: string): Promise<AuthUser> {
    const user = await this.authenticator.authenticate(token);
    if (!user) {
      throw AppError.unauthenticated(REFUSED);
    }
    return user;
  }

  /** Authenticates the request's API token through this strategy. */
  authenticateRequest(req: Request): Promise<AuthUser> {
    return runStrategy<AuthUser>(this, req, () => REFUSED);
  }
}
