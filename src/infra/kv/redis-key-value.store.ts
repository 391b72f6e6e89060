import { Redis } from 'ioredis';
import { KeyValueStore, WindowHit } from './key-value-store.js';

const COMPARE_AND_SWAP = `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[2], 'EX', ARGV[3])
  return 1
end
return 0`;

const DELETE_IF_EQUALS = `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0`;

const INCREMENT_WITH_TTL = `
local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('EXPIRE', KEYS[1], ARGV[1]) end
return n`;

// A fixed window in one round trip. Past the limit the client is blocked; hits during the block are counted on
// the block key (for logs), and when the block ends counting starts afresh, as in @nestjs/throttler's own storage.
const HIT_WINDOW = `
local hitKey, blockKey = KEYS[1], KEYS[2]
local windowMs, limit, blockMs = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local blockTtl = redis.call('PTTL', blockKey)
if blockTtl > 0 then
  local during = redis.call('INCR', blockKey)
  return { limit + during, blockTtl, 1, blockTtl }
end
local totalHits = redis.call('INCR', hitKey)
local timeToExpire = redis.call('PTTL', hitKey)
if timeToExpire <= 0 then
  redis.call('PEXPIRE', hitKey, windowMs)
  timeToExpire = windowMs
end
if totalHits > limit then
  redis.call('SET', blockKey, '1', 'PX', blockMs)
  redis.call('DEL', hitKey)
  return { totalHits, blockMs, 1, blockMs }
end
return { totalHits, timeToExpire, 0, 0 }`;

export interface RedisOptions {
  url: string;
  keyPrefix?: string;
}

/** The shared key-value store of a multi-replica deployment. */
export class RedisKeyValueStore extends KeyValueStore {
  readonly kind = 'redis' as const;
  readonly client: Redis;
  private readonly prefix: string;
  private subscriber: Redis | undefined;
  private readonly subscriptions = new Map<string, Set<(message: string) => void>>();

  constructor(options: RedisOptions) {
    super();
    this.prefix = options.keyPrefix ?? 'tms:';
    this.client = new Redis(options.url, {
      keyPrefix: options.keyPrefix ?? 'tms:',
      connectTimeout: 5_000,
      commandTimeout: 5_000,
      maxRetriesPerRequest: 2,
      enableOfflineQueue: true,
      lazyConnect: false,
    });
    // ioredis reconnects by itself; an unhandled 'error' event would crash the process.
    this.client.on('error', () => undefined);
    this.client.defineCommand('tmsCompareAndSwap', { numberOfKeys: 1, lua: COMPARE_AND_SWAP });
    this.client.defineCommand('tmsDeleteIfEquals', { numberOfKeys: 1, lua: DELETE_IF_EQUALS });
    this.client.defineCommand('tmsIncrementWithTtl', { numberOfKeys: 1, lua: INCREMENT_WITH_TTL });
    this.client.defineCommand('tmsHitWindow', { numberOfKeys: 2, lua: HIT_WINDOW });
  }

  get(key: string): Promise<string | null> {
    return this.client.get(key);
  }

  async set(key: string, value: string, ttlSeconds: number): Promise<void> {
    await this.client.set(key, value, 'EX', ttlSeconds);
  }

  async setIfAbsent(key: string, value: string, ttlSeconds: number): Promise<boolean> {
    return (await this.client.set(key, value, 'EX', ttlSeconds, 'NX')) === 'OK';
  }

  async compareAndSwap(key: string, expected: string, next: string, ttlSeconds: number): Promise<boolean> {
    return (await this.call<number>('tmsCompareAndSwap', key, expected, next, ttlSeconds)) === 1;
  }

  async delete(key: string): Promise<void> {
    await this.client.del(key);
  }

  async deleteIfEquals(key: string, expected: string): Promise<boolean> {
    return (await this.call<number>('tmsDeleteIfEquals', key, expected)) === 1;
  }

  async ttlSeconds(key: string): Promise<number> {
    const ms = await this.client.pttl(key);
    return ms > 0 ? Math.ceil(ms / 1000) : 0;
  }

  incrementWithTtl(key: string, ttlSeconds: number): Promise<number> {
    return this.call<number>('tmsIncrementWithTtl', key, ttlSeconds);
  }

  async hitWindow(key: string, windowMs: number, limit: number, blockMs: number): Promise<WindowHit> {
    const [totalHits, timeToExpire, blocked, timeToBlockExpire] = await this.call<number[]>(
      'tmsHitWindow',
      key,
      `${key}:blocked`,
      windowMs,
      limit,
      blockMs,
    );
    return {
      totalHits,
      timeToExpire: Math.ceil(timeToExpire / 1000),
      isBlocked: blocked === 1,
      timeToBlockExpire: Math.ceil(timeToBlockExpire / 1000),
    };
  }

  /** Channels are not prefixed by ioredis: the key prefix is added here, so deployments sharing a Redis stay apart. */
  async publish(channel: string, message: string): Promise<number> {
    return this.client.publish(`${this.prefix}${channel}`, message);
  }

  /**
   * On a connection of its own, opened on first use (a subscribed connection can do nothing else); ioredis
   * subscribes again after a reconnect.
   */
  async subscribe(channel: string, onMessage: (message: string) => void): Promise<() => Promise<void>> {
    const name = `${this.prefix}${channel}`;
    if (!this.subscriber) {
      const subscriber = this.client.duplicate({ keyPrefix: undefined });
      subscriber.on('error', () => undefined);
      subscriber.on('message', (from: string, message: string) => {
        for (const deliver of this.subscriptions.get(from) ?? []) {
          deliver(message);
        }
      });
      this.subscriber = subscriber;
    }
    const subscribers = this.subscriptions.get(name) ?? new Set();
    if (!subscribers.size) {
      await this.subscriber.subscribe(name);
    }
    this.subscriptions.set(name, subscribers);
    subscribers.add(onMessage);
    return async () => {
      subscribers.delete(onMessage);
      if (!subscribers.size) {
        this.subscriptions.delete(name);
        await this.subscriber?.unsubscribe(name).catch(() => undefined);
      }
    };
  }

  async ping(): Promise<void> {
    await this.client.ping();
  }

  async close(): Promise<void> {
    if (this.subscriber) {
      await this.subscriber.quit().catch(() => this.subscriber?.disconnect());
    }
    await this.client.quit().catch(() => this.client.disconnect());
  }

  private call<T>(command: string, ...args: (string | number)[]): Promise<T> {
    const fn = (this.client as unknown as Record<string, (...a: (string | number)[]) => Promise<T>>)[command];
    return fn.apply(this.client, args);
  }
}
