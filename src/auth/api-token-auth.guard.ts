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

/** Passport's guard for API tokens (`tms_…`). */
@Injectable()
export class ApiTokenAuthGuard extends AuthGuard('api-token') {
  override handleRequest<T = AuthUser>(error: unknown, user: T | false): T {
    return handle(error, user, () => AppError.unauthenticated('The API token is invalid, expired or revoked'));
  }
}
