/** One fixed-window hit (the shape @nestjs/throttler used); times in seconds. */
export interface WindowHit {
  totalHits: number;
  timeToExpire: number;
  isBlocked: boolean;
  timeToBlockExpire: number;
}

/**
 * Short-lived shared state: refresh-token families, rate-limit counters, mail counters, used TOTP steps.
 * Redis when SVC_KVSTORE_URL is set (shared by every replica), otherwise in-process (one node).
 * Every operation is atomic on its key.
 */
export abstract class KeyValueStore {
  abstract readonly kind: 'redis' | 'memory';

  abstract get(key: string): Promise<string | null>;

  abstract set(key: string, value: string, ttlSeconds: number): Promise<void>;

  /** Sets only when the key does not exist; true when this call set it. */
  abstract setIfAbsent(key: string, value: string, ttlSeconds: number): Promise<boolean>;

  /** Replaces the value only while it still equals `expected`; true when this call replaced it. */
  abstract compareAndSwap(key: string, expected: string, next: string, ttlSeconds: number): Promise<boolean>;

  abstract delete(key: string): Promise<void>;

  /** Deletes the key only while its value still equals `expected` (a lease given back by its holder); true if so. */
  abstract deleteIfEquals(key: string, expected: string): Promise<boolean>;

  /** Whole seconds until the key expires (rounded up); 0 when it does not exist. */
  abstract ttlSeconds(key: string): Promise<number>;

  /** Adds one and returns the new count; the first increment starts the key's lifetime. */
  abstract incrementWithTtl(key: string, ttlSeconds: number): Promise<number>;

  /** Counts a hit in a fixed window of `windowMs`; past `limit` the key is blocked for `blockMs`. */
  abstract hitWindow(key: string, windowMs: number, limit: number, blockMs: number): Promise<WindowHit>;

  /**
   * Publishes `message` on `channel` to every subscriber of every replica; resolves with how many subscriptions
   * it reached (Redis counts the connections that were subscribed when it delivered the message).
   */
  abstract publish(channel: string, message: string): Promise<number>;

  /** Calls `onMessage` for every message published on `channel` from now on; resolves with its unsubscribe. */
  abstract subscribe(channel: string, onMessage: (message: string) => void): Promise<() => Promise<void>>;

  abstract ping(): Promise<void>;

  abstract close(): Promise<void>;
}
