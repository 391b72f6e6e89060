import { Injectable } from '@nestjs/common';
import { AuthGuard } from '@nestjs/passport';
import { AppError } from '../common/app-error.js';
import type { AuthUser } from '../common/auth-user.js';

function handle<T>(error: unknown, user: T | false, fallback: () => AppError): T {
  if (error) {
    throw error instanceof AppError ? error : fallback();
  }
  if (!user) {
    throw fallback();
  }
  return user;
}

/** Passport's JWT guard with our error messages instead of a bare 401. */
@Injectable()
export class JwtAuthGuard extends AuthGuard('jwt') {
  override handleRequest<T = AuthUser>(error: unknown, user: T | false, info: unknown): T {
    const expired = (info as { name?: string } | undefined)?.name === 'TokenExpiredError';
    return handle(error, user, () =>
      AppError.unauthenticated(expired ? 'The access token has expired; refresh it' : 'The access token is invalid'),
    );
  }
}

/** Passport's guard for API tokens (`tms_…`). */
@Injectable()
export class ApiTokenAuthGuard extends AuthGuard('api-token') {
  override handleRequest<T = AuthUser>(error: unknown, user: T | false): T {
    return handle(error, user, () => AppError.unauthenticated('The API token is invalid, expired or revoked'));
  }
}
