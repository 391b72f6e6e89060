import { randomBytes } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { rateLimitedFor } from '../common/rate-limit.js';
import { AppConfig } from '../config/app-config.js';
import { KeyValueStore } from '../infra/kv/key-value-store.js';

/**
 * A slot is a lease in the shared store: it outlives a replica that dies mid-import by at most this long, and is
 * renewed while its import runs (which can take minutes for a large report).
 */
const LEASE_SECONDS = 60;
const RENEW_MS = 20_000;
/** Retry-After of a refusal: imports take seconds to minutes, so a client polling this often finds a slot soon. */
const RETRY_AFTER_SECONDS = 10;

/** Gives a slot back; calling it again does nothing. */
export type ReleaseSlot = () => Promise<void>;

/**
 * How many imports one user runs at once (SVC_IMPORT_MAX_CONCURRENT_PER_USER), across replicas: each import
 * parses and writes a whole report, so a handful in parallel from one account could take the service's CPU and
 * memory from everybody else. Slot `i` of user `u` is the key `import:slot:u:i`, held by a random token.
 */
@Injectable()
export class ImportSlots {
  private readonly max: number;

  constructor(
    private readonly kv: KeyValueStore,
    config: AppConfig,
  ) {
    this.max = config.import.maxConcurrentPerUser;
  }

  /** Takes a free slot of `userId`'s, or refuses with 429 and Retry-After when all of them are taken. */
  async acquire(userId: string): Promise<ReleaseSlot> {
    const token = randomBytes(12).toString('base64url');
    for (let i = 0; i < this.max; i++) {
      const key = `import:slot:${userId}:${i}`;
      if (await this.kv.setIfAbsent(key, token, LEASE_SECONDS)) {
        return this.held(key, token);
      }
    }
    throw rateLimitedFor(
      RETRY_AFTER_SECONDS,
      `You have ${this.max} imports running, as many as SVC_IMPORT_MAX_CONCURRENT_PER_USER allows at once`,
    );
  }

  private held(key: string, token: string): ReleaseSlot {
    const renewal = setInterval(() => {
      this.kv.compareAndSwap(key, token, token, LEASE_SECONDS).catch(() => undefined);
    }, RENEW_MS);
    renewal.unref();
    let released = false;
    return async () => {
      if (released) {
        return;
      }
      released = true;
      clearInterval(renewal);
      // Only this holder's lease: one that expired meanwhile may be another import's by now. A store that is
      // away leaves the lease to expire on its own.
      await this.kv.deleteIfEquals(key, token).catch(() => undefined);
    };
  }
}
