import { applyDecorators, createParamDecorator, ExecutionContext, SetMetadata } from '@nestjs/common';
import { ApiExtension } from '@nestjs/swagger';
import type { IncomingMessage } from 'node:http';
import type { Express, Request } from 'express';
import type { AuthUser } from './auth-user.js';
import { PUBLIC_EXTENSION } from './openapi.js';

export const IS_PUBLIC = 'tms:public';

/** Opts a route out of the global authentication guard (and marks it public in the OpenAPI document). */
export const Public = (): MethodDecorator & ClassDecorator =>
  applyDecorators(SetMetadata(IS_PUBLIC, true), ApiExtension(PUBLIC_EXTENSION, true));

/** The authenticated principal of this request, set by the global guard. */
export const CurrentUser = createParamDecorator(
  (_data: unknown, ctx: ExecutionContext): AuthUser => ctx.switchToHttp().getRequest<Request>().user as AuthUser,
);

/** The client address, honouring X-Forwarded-For only from SVC_TRUSTED_PROXIES (Express `trust proxy`). */
export const ClientIp = createParamDecorator(
  (_data: unknown, ctx: ExecutionContext): string => clientIp(ctx.switchToHttp().getRequest<Request>()),
);

export function clientIp(req: Request): string {
  const ip = req.ip ?? req.socket.remoteAddress ?? 'unknown';
  return ip.startsWith('::ffff:') ? ip.slice(7) : ip;
}

/**
 * The client address of a request Express does not route (a WebSocket upgrade), by the same rules as clientIp:
 * Express's own `req.ip`, with the application's `trust proxy` (SVC_TRUSTED_PROXIES), read off the request.
 */
export function upgradeClientIp(req: IncomingMessage, app: Express): string {
  const routed = Object.create(app.request, {
    headers: { value: req.headers },
    socket: { value: req.socket },
  }) as Request;
  return clientIp(routed);
}

export const ADMIN_ONLY = 'tms:admin-only';

/** Only platform administrators reach the route (checked against the database on every request). */
export const AdminOnly = (): MethodDecorator & ClassDecorator => SetMetadata(ADMIN_ONLY, true);

export const INTERACTIVE_ONLY = 'tms:interactive-only';

/** Needs a person at the web UI (access JWT): API tokens get 403 (API keys, two-factor, passwords). */
export const InteractiveOnly = (): MethodDecorator & ClassDecorator => SetMetadata(INTERACTIVE_ONLY, true);
