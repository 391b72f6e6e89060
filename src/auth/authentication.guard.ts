import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request } from 'express';
import { AppError } from '../common/app-error.js';
import type { AuthUser } from '../common/auth-user.js';
import { ADMIN_ONLY, INTERACTIVE_ONLY, IS_PUBLIC } from '../common/decorators.js';
import { UserCache } from '../users/user-cache.js';
import type { UserEntity } from '../users/user.entity.js';
import { AccessTokenService } from './access-token.service.js';
import { ApiTokenStrategy } from '../api-tokens/api-token.strategy.js';

export const API_TOKEN_PREFIX = 'tms_';

/** What a route's decorators ask of the guard, read once per route instead of on every request. */
interface RoutePolicy {
  isPublic: boolean;
  interactiveOnly: boolean;
  adminOnly: boolean;
}

/** What a token alone is checked for: the account's state, no route's demands. */
const OPEN_ROUTE: RoutePolicy = { isPublic: false, interactiveOnly: false, adminOnly: false };

/**
 * The global guard: every route needs a credential unless it is marked @Public(). The Bearer value's shape picks
 * the Passport strategy: API tokens start with `tms_` (ApiTokenStrategy, passport-http-bearer), anything else is an
 * access JWT (JwtStrategy, passport-jwt; a token it accepted is remembered until it expires, see
 * AccessTokenService.verify). The strategies run through runStrategy, not a Passport middleware built per request
 * (that wrapping cost ~20% of a small request's time). Sending credentials two ways on one request is refused, and
 * tokens in query strings are never accepted. Directory sign-in is LdapStrategy's, on POST /api/auth/login.
 */
@Injectable()
export class AuthenticationGuard implements CanActivate {
  /** Per controller class, per handler: the handler's own metadata overrides its class's. */
  private readonly policies = new WeakMap<object, WeakMap<object, RoutePolicy>>();

  constructor(
    private readonly reflector: Reflector,
    private readonly accessTokens: AccessTokenService,
    private readonly apiTokens: ApiTokenStrategy,
    private readonly userCache: UserCache,
  ) {}

  /** Synchronous when the credential is an access JWT and its user row is cached: the common request. */
  canActivate(context: ExecutionContext): boolean | Promise<boolean> {
    if (context.getType() !== 'http') {
      return true;
    }
    const req = context.switchToHttp().getRequest<Request>();
    const { header, inQuery } = credentialsOf(req);
    const policy = this.policyOf(context);
    if (policy.isPublic) {
      return true;
    }
    if (inQuery) {
      throw AppError.unauthenticated(
        'Tokens in the query string are not accepted: use the Authorization header',
      );
    }
    if (!header) {
      throw AppError.unauthenticated('Authentication is required: send Authorization: Bearer <token>');
    }
    const [scheme, value, extra] = header.split(' ');
    if (scheme.toLowerCase() !== 'bearer' || !value || extra !== undefined) {
      throw AppError.unauthenticated('Send credentials as Authorization: Bearer <token>');
    }
    if (value.startsWith(API_TOKEN_PREFIX)) {
      return this.apiTokens.authenticateRequest(req).then((user) => {
        req.user = user;
        return this.authorize(req, policy);
      });
    }
    const verified = this.accessTokens.verify(value);
    if (verified instanceof Promise) {
      return verified.then(({ user }) => {
        req.user = user;
        return this.authorize(req, policy);
      });
    }
    req.user = verified.user;
    return this.authorize(req, policy);
  }

  /**
   * An access JWT outlives a change to its user: a disabled or deleted account stops here, and so does a token
   * issued before the user's tokensValidAfter (every session ended), on every replica at once (the change is
   * broadcast to the user caches). API tokens are checked against the account when they are looked up.
   */
  private authorize(req: Request, policy: RoutePolicy): boolean | Promise<boolean> {
    const principal = req.user as AuthUser;
    return this.userCache.withUser(principal.id, (user) => permit(principal, user, policy));
  }

  /**
   * A bare token (the WebSocket's `auth` message), by the rules of a request's Bearer value and through the same
   * strategies, then the account's state. Resolves with the principal and, for a JWT, when it expires (epoch ms);
   * throws AppError 401 otherwise.
   */
  async authenticateToken(token: string): Promise<{ user: AuthUser; expiresAt?: number }> {
    let user: AuthUser;
    let expiresAt: number | undefined;
    if (token.startsWith(API_TOKEN_PREFIX)) {
      user = await this.apiTokens.authenticateRequest({
        headers: { authorization: `Bearer ${token}` },
      } as Request);
      expiresAt = user.expiresAt;
    } else {
      const verified = await this.accessTokens.verify(token);
      user = verified.user;
      expiresAt = verified.exp * 1000;
    }
    await this.userCache.withUser(user.id, (row) => permit(user, row, OPEN_ROUTE));
    return { user, expiresAt };
  }

  private policyOf(context: ExecutionContext): RoutePolicy {
    const handler = context.getHandler();
    const controller = context.getClass();
    let byHandler = this.policies.get(controller);
    if (!byHandler) {
      byHandler = new WeakMap();
      this.policies.set(controller, byHandler);
    }
    let policy = byHandler.get(handler);
    if (!policy) {
      const flag = (key: string) =>
        this.reflector.getAllAndOverride<boolean>(key, [handler, controller]) === true;
      policy = {
        isPublic: flag(IS_PUBLIC),
        interactiveOnly: flag(INTERACTIVE_ONLY),
        adminOnly: flag(ADMIN_ONLY),
      };
      byHandler.set(handler, policy);
    }
    return policy;
  }
}

function permit(principal: AuthUser, user: UserEntity | null, policy: RoutePolicy): true {
  if (!user?.enabled) {
    throw AppError.unauthenticated('The account no longer exists or is disabled');
  }
  // Every session ended (a password reset, a disabled account): access JWTs issued until then are refused.
  if (
    principal.issuedAt !== undefined &&
    user.tokensValidAfter &&
    principal.issuedAt <= user.tokensValidAfter.getTime()
  ) {
    throw AppError.unauthenticated(
      'The session was signed out (a password reset or an account change); sign in again',
    );
  }
  principal.admin = user.admin;
  if (principal.via !== 'JWT' && policy.interactiveOnly) {
    throw AppError.forbidden(
      'API tokens cannot manage API keys, two-factor authentication or passwords: sign in to the web UI',
    );
  }
  if (!user.admin && policy.adminOnly) {
    throw AppError.forbidden('Only platform administrators may do this');
  }
  return true;
}

/** The Authorization header, after refusing requests that carry credentials more than one way. */
function credentialsOf(req: Request): { header?: string; inQuery: boolean } {
  let headers = 0;
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    const name = req.rawHeaders[i];
    if (name.length === 13 && name.toLowerCase() === 'authorization') {
      headers++;
    }
  }
  // Express parses the query string on every read of req.query: read it once, and only when there is one.
  const query = req.url.includes('?') ? (req.query as unknown) : undefined;
  const inQuery = typeof query === 'object' && query !== null && 'access_token' in query;
  if (headers > 1 || (headers === 1 && inQuery)) {
    throw AppError.validation(
      'Mixing authentication methods on one request is unsupported: send exactly one Authorization header',
    );
  }
  return { header: req.headers.authorization, inQuery };
}
