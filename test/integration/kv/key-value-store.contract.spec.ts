import { randomBytes } from 'node:crypto';
import { KeyValueStore } from '../../../src/infra/kv/key-value-store.js';
import { MemoryKeyValueStore } from '../../../src/infra/kv/memory-key-value.store.js';
import { RedisKeyValueStore } from '../../../src/infra/kv/redis-key-value.store.js';
import { TEST_REDIS_URL } from '../../support/services.js';

/** One contract, both adapters: what the services rely on must hold for Redis and for the embedded store. */
describe.each([
  ['memory', () => new MemoryKeyValueStore()],
  ['redis', () => new RedisKeyValueStore({ url: TEST_REDIS_URL, keyPrefix: `test:kv:${randomBytes(4).toString('hex')}:` })],
])('KeyValueStore contract: %s', (_name, make: () => KeyValueStore) => {
  let sut: KeyValueStore;

  beforeAll(() => {
    sut = make();
  });
  afterAll(() => sut.close());

  const key = () => `k:${randomBytes(6).toString('hex')}`;
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

  it('stores, reads and deletes', async () => {
    const k = key();
    expect(await sut.get(k)).toBeNull();
    await sut.set(k, 'v', 60);
    expect(await sut.get(k)).toBe('v');
    await sut.delete(k);
    expect(await sut.get(k)).toBeNull();
  });

  it('forgets a value after its time to live', async () => {
    const k = key();
    await sut.set(k, 'v', 1);
    await sleep(1100);
    expect(await sut.get(k)).toBeNull();
  });

  it('sets only an absent key', async () => {
    const k = key();
    expect(await sut.setIfAbsent(k, 'a', 60)).toBe(true);
    expect(await sut.setIfAbsent(k, 'b', 60)).toBe(false);
    expect(await sut.get(k)).toBe('a');
  });

  it('swaps only from the expected value, once under concurrency', async () => {
    const k = key();
    await sut.set(k, 'v1', 60);
    expect(await sut.compareAndSwap(k, 'other', 'x', 60)).toBe(false);
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => sut.compareAndSwap(k, 'v1', `v2-${i}`, 60)));
    expect(results.filter(Boolean)).toHaveLength(1);
    expect(await sut.get(k)).toMatch(/^v2-\d$/);
    expect(await sut.compareAndSwap(key(), 'v1', 'x', 60)).toBe(false);
  });

  it('deletes only while the value is the one expected (a lease given back by its holder alone)', async () => {
    const k = key();
    await sut.set(k, 'mine', 60);
    expect(await sut.deleteIfEquals(k, 'theirs')).toBe(false);
    expect(await sut.get(k)).toBe('mine');
    expect(await sut.deleteIfEquals(k, 'mine')).toBe(true);
    expect(await sut.get(k)).toBeNull();
    expect(await sut.deleteIfEquals(k, 'mine')).toBe(false);
  });

  it('counts atomically and starts the lifetime with the first increment', async () => {
    const k = key();
    const counts = await Promise.all(Array.from({ length: 20 }, () => sut.incrementWithTtl(k, 1)));
    expect(counts.sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    await sleep(1100);
    expect(await sut.incrementWithTtl(k, 1)).toBe(1);
  });

  it('tells the seconds a key has left, rounded up, and 0 for a missing key', async () => {
    const k = key();
    expect(await sut.ttlSeconds(k)).toBe(0);
    await sut.incrementWithTtl(k, 3600);
    expect(await sut.ttlSeconds(k)).toBeGreaterThan(3595);
    expect(await sut.ttlSeconds(k)).toBeLessThanOrEqual(3600);
  });

  it('counts hits in a fixed window and blocks past the limit', async () => {
    const k = key();
    const hits = [];
    for (let i = 0; i < 4; i++) {
      hits.push(await sut.hitWindow(k, 60_000, 3, 1_000));
    }
    expect(hits.map((h) => [h.totalHits, h.isBlocked])).toEqual([
      [1, false],
      [2, false],
      [3, false],
      [4, true],
    ]);
    expect(hits[3].timeToBlockExpire).toBe(1);
    expect(hits[0].timeToExpire).toBe(60);
    // Hits during the block are refused and counted; they do not prolong it.
    expect(await sut.hitWindow(k, 60_000, 3, 1_000)).toEqual(expect.objectContaining({ totalHits: 5, isBlocked: true }));
    await sleep(1100);
    // When the block ends, counting starts afresh.
    const after = await sut.hitWindow(k, 60_000, 3, 1_000);
    expect(after).toEqual({ totalHits: 1, timeToExpire: 60, isBlocked: false, timeToBlockExpire: 0 });
  });

  it('answers a ping', async () => {
    await expect(sut.ping()).resolves.toBeUndefined();
  });

  it('delivers a published message to each subscription, counts them, and stops after an unsubscribe', async () => {
    const channel = `ch:${randomBytes(4).toString('hex')}`;
    const first: string[] = [];
    const second: string[] = [];
    const stopFirst = await sut.subscribe(channel, (m) => first.push(m));
    const stopSecond = await sut.subscribe(channel, (m) => second.push(m));
    const reached = await sut.publish(channel, 'hello');
    // Redis counts subscribed connections (this store subscribes on one), the embedded store its handlers.
    expect(reached).toBeGreaterThanOrEqual(1);
    for (let i = 0; i < 50 && (first.length < 1 || second.length < 1); i++) {
      await sleep(10);
    }
    expect([first, second]).toEqual([['hello'], ['hello']]);
    await stopFirst();
    await sut.publish(channel, 'again');
    for (let i = 0; i < 50 && second.length < 2; i++) {
      await sleep(10);
    }
    expect([first, second]).toEqual([['hello'], ['hello', 'again']]);
    await stopSecond();
    expect(await sut.publish(channel, 'nobody')).toBe(0);
  });
});

describe('KeyValueStore channels on Redis', () => {
  it('keep deployments with other key prefixes apart', async () => {
    const [a, b] = ['a', 'b'].map(
      (p) => new RedisKeyValueStore({ url: TEST_REDIS_URL, keyPrefix: `test:kv:${p}${randomBytes(4).toString('hex')}:` }),
    );
    try {
      const heard: string[] = [];
      await b.subscribe('invalidate', (m) => heard.push(m));
      expect(await a.publish('invalidate', 'not for b')).toBe(0);
      expect(await b.publish('invalidate', 'for b')).toBe(1);
      for (let i = 0; i < 50 && !heard.length; i++) {
        await new Promise((r) => setTimeout(r, 10));
      }
      expect(heard).toEqual(['for b']);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });
});
