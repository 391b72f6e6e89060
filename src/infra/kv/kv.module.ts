import { Global, Inject, Module, OnApplicationShutdown } from '@nestjs/common';
import { AppConfig } from '../../config/app-config.js';
import { CacheInvalidation } from './cache-invalidation.js';
import { KeyValueStore } from './key-value-store.js';
import { MemoryKeyValueStore } from './memory-key-value.store.js';
import { RedisKeyValueStore } from './redis-key-value.store.js';

export function createKeyValueStore(config: AppConfig): KeyValueStore {
  return config.kv.url ? new RedisKeyValueStore({ url: config.kv.url, keyPrefix: config.kv.prefix }) : new MemoryKeyValueStore();
}

@Global()
@Module({
  providers: [{ provide: KeyValueStore, inject: [AppConfig], useFactory: createKeyValueStore }, CacheInvalidation],
  exports: [KeyValueStore, CacheInvalidation],
})
export class KvModule implements OnApplicationShutdown {
  constructor(@Inject(KeyValueStore) private readonly store: KeyValueStore) {}

  async onApplicationShutdown(): Promise<void> {
    await this.store.close();
  }
}
