import type { KeyValueStore } from '../infra/kv/key-value-store.js';
import { AppError } from './app-error.js';

/** "60 seconds" up to 90 seconds, then "2 minutes", "59 minutes": how long to wait, as a person reads it (rounded up). */
export function waitingTime(seconds: number): string {
  if (seconds <= 90) {
    return `${seconds} second${seconds === 1 ? '' : 's'}`;
  }
  const minutes = Math.ceil(seconds / 60);
  return `${minutes} minutes`;
}

/** 429 saying, in Retry-After and the message, how long the refusal really lasts. */
export function rateLimitedFor(seconds: number, what = 'Too many requests'): AppError {
  const wait = Math.max(1, seconds);
  return AppError.rateLimited(`${what}; wait ${waitingTime(wait)} and retry`, wait);
}

/**
 * Counts one request against `limit` per fixed window of `windowMs` in the shared store (so the limit holds
 * across replicas) and refuses it with 429 past the limit, for the next 60 seconds (Retry-After says what is
 * left of them).
 */
export async function enforceWindowLimit(
  kv: KeyValueStore,
  key: string,
  windowMs: number,
  limit: number,
  what?: string,
): Promise<void> {
  const hit = await kv.hitWindow(key, windowMs, limit, 60_000);
  if (hit.isBlocked) {
    throw rateLimitedFor(hit.timeToBlockExpire, what);
  }
}
