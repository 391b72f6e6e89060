import { AppConfig } from '../config/app-config.js';
import { MemoryKeyValueStore } from '../infra/kv/memory-key-value.store.js';
import { RefreshTokenService, sessionOfToken } from './refresh-token.service.js';

describe(RefreshTokenService.name, () => {
  let kv: MemoryKeyValueStore;
  let sut: RefreshTokenService;

  beforeEach(() => {
    kv = new MemoryKeyValueStore();
    sut = new RefreshTokenService(kv, { auth: { refreshTtlSeconds: 3600 } } as AppConfig);
  });
  afterEach(() => kv.close());

  it('rotates: the new token works once, the old one is reuse', async () => {
    const first = await sut.issue('7');
    const rotated = await sut.rotate(first);
    expect(rotated).toEqual(expect.objectContaining({ kind: 'rotated', userId: '7' }));
    const second = (rotated as { token: string }).token;
    expect(second).not.toBe(first);

    expect(await sut.rotate(first)).toEqual(expect.objectContaining({ kind: 'reused', userId: '7' }));
    // Reuse revoked the family: the newest token is dead too.
    expect(await sut.rotate(second)).toEqual({ kind: 'invalid' });
  });

  it('lets exactly one of several concurrent rotations of one token win', async () => {
    const token = await sut.issue('7');
    const outcomes = await Promise.all(Array.from({ length: 8 }, () => sut.rotate(token)));
    expect(outcomes.filter((o) => o.kind === 'rotated').length).toBeLessThanOrEqual(1);
    expect(
      outcomes.filter((o) => o.kind === 'rotated').length +
        outcomes.filter((o) => o.kind !== 'rotated').length,
    ).toBe(8);
  });

  it.each([undefined, '', 'garbage', 'a.b', `${'a'.repeat(22)}.${'b'.repeat(43)}`])(
    'treats %j as invalid',
    async (token) => {
      expect(await sut.rotate(token)).toEqual({ kind: 'invalid' });
    },
  );

  it('revokes one family on logout and reports its user', async () => {
    const a = await sut.issue('7');
    const b = await sut.issue('7');
    expect(await sut.revoke(a)).toEqual({ userId: '7', session: sessionOfToken(a) });
    expect(sessionOfToken(a)).not.toBe(sessionOfToken(b));
    expect(a).not.toContain(sessionOfToken(a));
    expect(await sut.rotate(a)).toEqual({ kind: 'invalid' });
    expect((await sut.rotate(b)).kind).toBe('rotated');
  });

  it("revokes every family of a user, and only that user's", async () => {
    const a = await sut.issue('7');
    const other = await sut.issue('8');
    await new Promise((r) => setTimeout(r, 2));
    await sut.revokeAllForUser('7');
    expect(await sut.rotate(a)).toEqual({ kind: 'invalid' });
    expect((await sut.rotate(other)).kind).toBe('rotated');
    await new Promise((r) => setTimeout(r, 2));
    expect((await sut.rotate(await sut.issue('7'))).kind).toBe('rotated');
  });
});
