import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request } from 'express';
import { AppError } from '../common/app-error.js';
import type { AuthUser } from '../common/auth-user.js';
import { ADMIN_ONLY, INTERACTIVE_ONLY, IS_PUBLIC } from '../common/decorators.js';
import { UserCache } from '../users/user-cache.js';
import { AccessTokenService } from './access-token.service.js';
import { ApiTokenAuthGuard } from './api-token-auth.guard.js';

export const API_TOKEN_PREFIX = 'tms_';

/**
 * The global guard: every route needs a credential unless it is marked @Public(). The Bearer value's shape
 * picks the path (API tokens start with `tms_` and go through their Passport strategy; anything else is an
 * access JWT, verified here with @nestjs/jwt: Passport's wrapping cost ~20% of a small request's time);
 * sending credentials two ways on one request is refused, and tokens in query strings are never accepted.
 */
@Injectable()
export class AuthenticationGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly accessTokens: AccessTokenService,
    private readonly apiToken: ApiTokenAuthGuard,
    private readonly userCache: UserCache,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (context.getType() !== 'http') {
      return true;
    }
    const req = context.switchToHttp().getRequest<Request>();
    const { header, inQuery } = credentialsOf(req);
    const targets = [context.getHandler(), context.getClass()];
    if (this.reflector.getAllAndOverride<boolean>(IS_PUBLIC, targets)) {
      return true;
    }
    if (inQuery) {
      throw AppError.unauthenticated('Tokens in the query string are not accepted: use the Authorization header');
    }
    if (!header) {
      throw AppError.unauthenticated('Authentication is required: send Authorization: Bearer <token>');
    }
    const [scheme, value, extra] = header.split(' ');
    if (scheme.toLowerCase() !== 'bearer' || !value || extra !== undefined) {
      throw AppError.unauthenticated('Send credentials as Authorization: Bearer <token>');
    }
    if (value.startsWith(API_TOKEN_PREFIX)) {
      await this.apiToken.canActivate(context);
    } else {
      req.user = this.accessTokens.verify(value);
    }
    const principal = req.user as AuthUser;
    // An access JWT outlives a change to its user: a disabled or deleted account stops here (within the user
    // cache's second on other replicas). API tokens are checked against the account when they are looked up.
    const user = await this.userCache.get(principal.id);
    if (!user?.enabled) {
      throw AppError.unauthenticated('The account no longer exists or is disabled');
    }
    principal.admin = user.admin;
    if (principal.via !== 'JWT' && this.reflector.getAllAndOverride<boolean>(INTERACTIVE_ONLY, targets)) {
      throw AppError.forbidden(
        'API tokens cannot manage API keys, two-factor authentication or passwords: sign in to the web UI',
      );
    }
    if (!user.admin && this.reflector.getAllAndOverride<boolean>(ADMIN_ONLY, targets)) {
      throw AppError.forbidden('Only platform administrators may do this');
    }
    return true;
  }
}

/** The Authorization header, after refusing requests that carry credentials more than one way. */
function credentialsOf(req: Request): { header?: string; inQuery: boolean } {
  let headers = 0;
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    if (req.rawHeaders[i].toLowerCase() === 'authorization') {
      headers++;
    }
  }
  const inQuery = req.query && typeof req.query === 'object' && 'access_token' in req.query;
  if (headers > 1 || (headers === 1 && inQuery)) {
    throw AppError.validation(
      'Mixing authentication methods on one request is unsupported: send exactly one Authorization header',
    );
  }
  return { header: req.headers.authorization, inQuery };
}
