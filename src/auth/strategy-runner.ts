import type { Request } from 'express';
import type { Strategy } from 'passport';
import { AppError } from '../common/app-error.js';

/** The calls a Passport strategy makes on the object it authenticates through (Passport's own `augment`). */
interface Attempt {
  success(user: unknown): void;
  fail(challenge?: unknown, status?: number): void;
  error(error: unknown): void;
  pass(): void;
  redirect(url: string): void;
  authenticate(req: Request, options?: object): void;
}

/**
 * Runs a Passport strategy on one request and resolves with the user it authenticated, as passport.authenticate()
 * would, without building Passport's middleware for every request (that wrapping, through @nestjs/passport's
 * AuthGuard, cost a measurable share of a small authenticated request): the strategy's protocol is four callbacks
 * on an object that inherits from it. A failure is a 401 with `failure`'s message; an error thrown by the
 * strategy's validate (an AppError) comes through as it is.
 */
export function runStrategy<T>(
  strategy: Strategy,
  req: Request,
  failure: (challenge: unknown) => string,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const attempt = Object.create(strategy) as Attempt;
    attempt.success = (user) => resolve(user as T);
    attempt.fail = (challenge) => reject(AppError.unauthenticated(failure(challenge)));
    attempt.error = (error) => reject(error instanceof Error ? error : new Error(String(error)));
    attempt.pass = () => reject(AppError.unauthenticated(failure(undefined)));
    attempt.redirect = () => reject(AppError.unauthenticated(failure(undefined)));
    try {
      attempt.authenticate(req, {});
    } catch (error) {
      reject(error instanceof Error ? error : new Error(String(error)));
    }
  });
}
