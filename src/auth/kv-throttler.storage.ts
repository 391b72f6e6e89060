import type { ThrottlerStorage } from '@nestjs/throttler';
import type { KeyValueStore } from '../infra/kv/key-value-store.js';

/**
 * @nestjs/throttler's storage on our key-value port: Redis (shared by every replica) or in-process.
 * Written here rather than taken from @nest-lab/throttler-storage-redis, which declares Nest ≤ 11 and, being
 * CommonJS that requires @nestjs/common, cannot load under Jest with NestJS 12's ES modules.
 */
export class KvThrottlerStorage implements ThrottlerStorage {
  constructor(private readonly kv: KeyValueStore) {}

  increment(
    key: string,
    ttl: number,
    limit: number,
    blockDuration: number,
    throttlerName: string,
  ): ReturnType<ThrottlerStorage['increment']> {
    return this.kv.hitWindow(`throttle:${throttlerName}:${key}`, ttl, limit, blockDuration);
  }
}
