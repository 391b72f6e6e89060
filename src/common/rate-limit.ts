import type { KeyValueStore } from '../infra/kv/key-value-store.js';
import { AppError } from './app-error.js';

/**
 * Counts one request against `limit` per fixed window of `windowMs` in the shared store (so the limit holds
 * across replicas) and refuses it with 429 (Retry-After: 60) past the limit, for the next 60 seconds.
 */
export async function enforceWindowLimit(
  kv: KeyValueStore,
  key: string,
  windowMs: number,
  limit: number,
  message?: string,
): Promise<void> {
  const hit = await kv.hitWindow(key, windowMs, limit, 60_000);
  if (hit.isBlocked) {
    throw AppError.rateLimited(message);
  }
}
