import { AppError } from '../common/app-error.js';

export const PASSWORD_MIN = 12;
export const PASSWORD_MAX = 256;

/** At least 12 characters, at most 256, and not the account's email address. */
export function assertAcceptablePassword(password: string | undefined, email: string): asserts password is string {
  if (typeof password !== 'string' || password.length < PASSWORD_MIN) {
    throw AppError.validation(`password must be at least ${PASSWORD_MIN} characters long`);
  }
  if (password.length > PASSWORD_MAX) {
    throw AppError.validation(`password must be at most ${PASSWORD_MAX} characters long`);
  }
  if (password.trim().toLowerCase() === email.toLowerCase()) {
    throw AppError.validation('password must not be the email address');
  }
}
