import { jest } from '@jest/globals';
import { makeUser } from '../../test/factories/user.factory.js';
import { CacheInvalidation } from '../infra/kv/cache-invalidation.js';
import { MemoryKeyValueStore } from '../infra/kv/memory-key-value.store.js';
import { UserCache } from './user-cache.js';
import type { UsersRepository } from './users.repository.js';

describe(UserCache.name, () => {
  const ada = makeUser({ id: '3' });
  let findById: ReturnType<typeof jest.fn>;
  let sut: UserCache;

  beforeEach(() => {
    jest.useFakeTimers({ now: new Date('2026-11-23T10:00:00Z') });
    findById = jest.fn(async (id: string) => (id === ada.id ? ada : null));
    sut = new UserCache({ findById } as unknown as UsersRepository, new CacheInvalidation(new MemoryKeyValueStore()));
  });
  afterEach(() => jest.useRealTimers());

  it('peeks nothing until a row was read, then the row (or null for no such user) for a second', async () => {
    expect(sut.peek('3')).toBeUndefined();
    await expect(sut.get('3')).resolves.toBe(ada);
    await expect(sut.get('4')).resolves.toBeNull();
    expect(sut.peek('3')).toBe(ada);
    expect(sut.peek('4')).toBeNull();
    await sut.get('3');
    expect(findById).toHaveBeenCalledTimes(2);

    jest.advanceTimersByTime(1_001);
    expect(sut.peek('3')).toBeUndefined();
    await sut.get('3');
    expect(findById).toHaveBeenCalledTimes(3);
  });

  it('applies a function to the row at once while it is cached, after reading it otherwise', async () => {
    const first = sut.withUser('3', (user) => user?.id);
    expect(first).toBeInstanceOf(Promise);
    await expect(first).resolves.toBe('3');
    expect(sut.withUser('3', (user) => user?.id)).toBe('3');
    expect(findById).toHaveBeenCalledTimes(1);
  });

  it('forgets a changed user at once', async () => {
    await sut.get('3');
    sut.forget('3');
    expect(sut.peek('3')).toBeUndefined();
  });
});
