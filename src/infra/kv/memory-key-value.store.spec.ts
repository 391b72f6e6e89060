import { MemoryKeyValueStore } from './memory-key-value.store.js';

describe(MemoryKeyValueStore.name, () => {
  it('reads the clock once per hit: a new window reports exactly its length even while the clock ticks', async () => {
    let clock = 1_000_000;
    // Every reading of the clock moves it on by a millisecond, as a busy machine would.
    const sut = new MemoryKeyValueStore(() => clock++);
    const first = await sut.hitWindow('k', 60_000, 1, 5_000);
    expect(first).toEqual({ totalHits: 1, timeToExpire: 60, isBlocked: false, timeToBlockExpire: 0 });
    const blocked = await sut.hitWindow('k', 60_000, 1, 5_000);
    expect(blocked).toEqual({ totalHits: 2, timeToExpire: 5, isBlocked: true, timeToBlockExpire: 5 });
    await sut.close();
  });
});
