import { Injectable } from '@nestjs/common';
import { AuthGuard } from '@nestjs/passport';
import { AppError } from '../common/app-error.js';
import type { AuthUser } from '../common/auth-user.js';

/** Passport's JWT guard with our error messages instead of a bare 401. */
@Injectable()
export class JwtAuthGuard extends AuthGuard('jwt') {
  override handleRequest<T = AuthUser>(error: unknown, user: T | false, info: unknown): T {
    if (error) {
      throw error instanceof AppError ? error : AppError.unauthenticated('The access token is invalid');
    }
    if (!user) {
      const expired = (info as { name?: string } | undefined)?.name === 'TokenExpiredError';
      throw AppError.unauthenticated(
        expired ? 'The access token has expired; refresh it' : 'The access token is invalid',
      );
    }
    return user;
  }
}
