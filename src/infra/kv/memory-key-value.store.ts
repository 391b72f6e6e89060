import { KeyValueStore, WindowHit } from './key-value-store.js';

interface Entry {
  value: string;
  expiresAt: number;
}

/** Single-node counterpart of Redis: a Map with expiry times, swept now and then. */
export class MemoryKeyValueStore extends KeyValueStore {
  readonly kind = 'memory' as const;
  private readonly entries = new Map<string, Entry>();
  private readonly channels = new Map<string, Set<(message: string) => void>>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(private readonly now: () => number = Date.now) {
    super();
    this.sweeper = setInterval(() => this.sweep(), 60_000);
    this.sweeper.unref();
  }

  get(key: string): Promise<string | null> {
    return Promise.resolve(this.live(key)?.value ?? null);
  }

  set(key: string, value: string, ttlSeconds: number): Promise<void> {
    this.put(key, value, ttlSeconds * 1000);
    return Promise.resolve();
  }

  setIfAbsent(key: string, value: string, ttlSeconds: number): Promise<boolean> {
    if (this.live(key)) {
      return Promise.resolve(false);
    }
    this.put(key, value, ttlSeconds * 1000);
    return Promise.resolve(true);
  }

  compareAndSwap(key: string, expected: string, next: string, ttlSeconds: number): Promise<boolean> {
    if (this.live(key)?.value !== expected) {
      return Promise.resolve(false);
    }
    this.put(key, next, ttlSeconds * 1000);
    return Promise.resolve(true);
  }

  delete(key: string): Promise<void> {
    this.entries.delete(key);
    return Promise.resolve();
  }

  deleteIfEquals(key: string, expected: string): Promise<boolean> {
    if (this.live(key)?.value !== expected) {
      return Promise.resolve(false);
    }
    this.entries.delete(key);
    return Promise.resolve(true);
  }

  ttlSeconds(key: string): Promise<number> {
    const entry = this.live(key);
    return Promise.resolve(entry ? Math.max(1, Math.ceil((entry.expiresAt - this.now()) / 1000)) : 0);
  }

  incrementWithTtl(key: string, ttlSeconds: number): Promise<number> {
    const entry = this.live(key);
    if (!entry) {
      this.put(key, '1', ttlSeconds * 1000);
      return Promise.resolve(1);
    }
    entry.value = String(Number(entry.value) + 1);
    return Promise.resolve(Number(entry.value));
  }

  hitWindow(key: string, windowMs: number, limit: number, blockMs: number): Promise<WindowHit> {
    const now = this.now();
    const block = this.live(`${key}:blocked`);
    if (block) {
      block.value = String(Number(block.value) + 1);
      const left = Math.ceil((block.expiresAt - now) / 1000);
      return Promise.resolve({ totalHits: limit + Number(block.value), timeToExpire: left, isBlocked: true, timeToBlockExpire: left });
    }
    // One reading of the clock for the whole hit: a new window must report exactly its length.
    const hits = this.live(key) ?? this.put(key, '0', windowMs, now);
    const totalHits = Number(hits.value) + 1;
    hits.value = String(totalHits);
    if (totalHits > limit) {
      this.put(`${key}:blocked`, '1', blockMs, now);
      this.entries.delete(key);
      const left = Math.ceil(blockMs / 1000);
      return Promise.resolve({ totalHits, timeToExpire: left, isBlocked: true, timeToBlockExpire: left });
    }
    return Promise.resolve({
      totalHits,
      timeToExpire: Math.ceil((hits.expiresAt - now) / 1000),
      isBlocked: false,
      timeToBlockExpire: 0,
    });
  }

  publish(channel: string, message: string): Promise<number> {
    const subscribers = [...(this.channels.get(channel) ?? [])];
    for (const deliver of subscribers) {
      deliver(message);
    }
    return Promise.resolve(subscribers.length);
  }

  subscribe(channel: string, onMessage: (message: string) => void): Promise<() => Promise<void>> {
    const subscribers = this.channels.get(channel) ?? new Set();
    this.channels.set(channel, subscribers);
    const deliver = (message: string) => onMessage(message);
    subscribers.add(deliver);
    return Promise.resolve(() => {
      subscribers.delete(deliver);
      return Promise.resolve();
    });
  }

  ping(): Promise<void> {
    return Promise.resolve();
  }

  close(): Promise<void> {
    clearInterval(this.sweeper);
    this.entries.clear();
    return Promise.resolve();
  }

  private put(key: string, value: string, ttlMs: number, now = this.now()): Entry {
    const entry = { value, expiresAt: now + ttlMs };
    this.entries.set(key, entry);
    return entry;
  }

  private live(key: string): Entry | undefined {
    const entry = this.entries.get(key);
    if (entry && entry.expiresAt <= this.now()) {
      this.entries.delete(key);
      return undefined;
    }
    return entry;
  }

  private sweep(): void {
    const now = this.now();
    for (const [key, entry] of this.entries) {
      if (entry.expiresAt <= now) {
        this.entries.delete(key);
      }
    }
  }
}
