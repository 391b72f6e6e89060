import { setTimeout as delay } from 'node:timers/promises';
import { isDeadlock, isSerializationFailure } from '../common/db-errors.js';

/**
 * Runs `transaction` (a whole transaction, its input in memory) again when PostgreSQL rolled it back for a concurrent
 * one: a deadlock, or a serialization failure. Nothing of it was stored, and the other transaction, no longer
 * waiting for it, goes on: a second try after a short pause (random, so that two retrying writers part) mostly goes
 * through. Up to `tries` times in all; then the error goes to the caller (a 503, all-exceptions.filter.ts). A lock
 * not granted in time (lock_timeout, 55P03) is not tried again: it has already waited its fill.
 */
export async function retryConflicts<T>(transaction: () => Promise<T>, tries = CONFLICT_TRIES): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await transaction();
    } catch (error) {
      const conflict = isDeadlock(error) || isSerializationFailure(error);
      if (!conflict || attempt >= tries) {
        throw error;
      }
      await delay(10 + Math.round(Math.random() * 50 * attempt));
    }
  }
}

/** Tries of a transaction rolled back for a concurrent one (see retryConflicts). */
export const CONFLICT_TRIES = 3;
