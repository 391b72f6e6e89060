import { Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import type { Request } from 'express';
import { Strategy } from 'passport-custom';
import { AppError } from '../common/app-error.js';
import type { AuthUser } from '../common/auth-user.js';
import { ApiTokenAuthenticator } from './api-token.authenticator.js';

/** Passport strategy for `Authorization: Bearer tms_…`. */
@Injectable()
export class ApiTokenStrategy extends PassportStrategy(Strategy, 'api-token') {
  constructor(private readonly authenticator: ApiTokenAuthenticator) {
    super();
  }

  async validate(req: Request): Promise<AuthUser> {
    const token = (req.headers.authorization ?? '').slice('Bearer '.length).trim();
    const user = await this.authenticator.authenticate(token);
    if (!user) {
      throw AppError.unauthenticated('The API token is invalid, expired or revoked');
    }
    return user;
  }
}
