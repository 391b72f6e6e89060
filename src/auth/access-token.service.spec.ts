import { createSecretKey } from 'node:crypto';
import { JwtService } from '@nestjs/jwt';
import type { AppConfig } from '../config/app-config.js';
import { CacheInvalidation } from '../infra/kv/cache-invalidation.js';
import { MemoryKeyValueStore } from '../infra/kv/memory-key-value.store.js';
import { AccessTokenService } from './access-token.service.js';
import { JwtStrategy } from './jwt.strategy.js';

describe(AccessTokenService.name, () => {
  const secret = 'a-test-secret-that-is-long-enough-for-hs256';
  const key = createSecretKey(Buffer.from(secret));
  const jwt = new JwtService({
    secret: key,
    signOptions: { algorithm: 'HS256' },
    verifyOptions: { algorithms: ['HS256'] },
  });
  const config = { auth: { accessTtlSeconds: 900, jwtSecret: secret } } as AppConfig;
  const kv = new MemoryKeyValueStore();
  const replica = () =>
    new AccessTokenService(jwt, config, new JwtStrategy(config), kv, new CacheInvalidation(kv));
  const sut = replica();
  const principal = async (token: string) => (await sut.verify(token)).user;
  const claimsOf = (token: string) =>
    JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString()) as Record<string, unknown>;

  /** The same token with one claim changed and the original signature kept. */
  function tampered(token: string, change: Record<string, unknown>): string {
    const [header, payload, signature] = token.split('.');
    const claims = { ...JSON.parse(Buffer.from(payload, 'base64url').toString()), ...change };
    return `${header}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.${signature}`;
  }

  it('answers the principal of a token it issued through the strategy once, then at once from memory', async () => {
    const { accessToken } = await sut.issue('42');
    const checked = sut.verify(accessToken);
    expect(checked).toBeInstanceOf(Promise);
    const first = (await checked).user;
    expect(first).toEqual({
      id: '42',
      admin: false,
      via: 'JWT',
      credentialId: expect.any(String),
      issuedAt: expect.any(Number),
    });
    const again = sut.verify(accessToken);
    expect(again).not.toBeInstanceOf(Promise);
    expect(await principal(accessToken)).toEqual(first);
    first.admin = true; // the guard sets admin on the principal it gets: that must not leak into the next request
    expect((await principal(accessToken)).admin).toBe(false);
  });

  it('refuses a token whose claims were changed under a remembered signature', async () => {
    const { accessToken } = await sut.issue('42');
    await sut.verify(accessToken);
    await expect(principal(tampered(accessToken, { sub: '1' }))).rejects.toThrow(
      'The access token is invalid',
    );
    expect((await principal(accessToken)).id).toBe('42');
  });

  it('refuses other tokens signed with the same key, other algorithms, expired tokens and garbage', async () => {
    const challenge = await jwt.signAsync({ sub: '42', typ: '2fa' });
    await expect(principal(challenge)).rejects.toThrow('The access token is invalid');
    const expired = await jwt.signAsync({ sub: '42', typ: 'access' }, { expiresIn: -10, jwtid: 'x' });
    await expect(principal(expired)).rejects.toThrow('The access token has expired; refresh it');
    const withoutExp = await jwt.signAsync(
      { sub: '42', typ: 'access', iat: Math.floor(Date.now() / 1000) },
      { jwtid: 'y', noTimestamp: true },
    );
    await expect(principal(withoutExp)).rejects.toThrow('The access token is invalid');
    const hs512 = await new JwtService({ secret: key }).signAsync(
      { sub: '42', typ: 'access' },
      { algorithm: 'HS512', jwtid: 'z', expiresIn: 60 },
    );
    await expect(principal(hs512)).rejects.toThrow('The access token is invalid');
    await expect(principal('not-a-token')).rejects.toThrow('The access token is invalid');
  });

  it('issues with a millisecond issue time in the second of `iat`, after a cut-off the clock has not reached', async () => {
    const before = Date.now();
    const { accessToken } = await sut.issue('42');
    const claims = claimsOf(accessToken);
    expect(claims.iat_ms).toBeGreaterThanOrEqual(before);
    expect(Math.floor((claims.iat_ms as number) / 1000)).toBe(claims.iat);
    expect((await principal(accessToken)).issuedAt).toBe(claims.iat_ms);
    // A cut-off set by a replica whose clock is ahead: the token is still issued after it.
    const ahead = new Date(Date.now() + 5_000);
    const later = claimsOf((await sut.issue('42', { notBefore: ahead, session: 's1' })).accessToken);
    expect(later.iat_ms).toBe(ahead.getTime() + 1);
    expect(later.sid).toBe('s1');
    // A token issued before iat_ms existed counts from the start of its second; one with an inconsistent iat_ms is
    // refused.
    const old = await jwt.signAsync({ sub: '42', typ: 'access' }, { jwtid: 'old', expiresIn: 60 });
    expect((await principal(old)).issuedAt).toBe((claimsOf(old).iat as number) * 1000);
    const odd = await jwt.signAsync(
      { sub: '42', typ: 'access', iat_ms: Date.now() - 5_000 },
      { jwtid: 'odd', expiresIn: 60 },
    );
    await expect(principal(odd)).rejects.toThrow('The access token is invalid');
  });

  it('refuses a token revoked by id, a remembered one too, and keeps the others', async () => {
    const kept = (await sut.issue('42')).accessToken;
    const revoked = (await sut.issue('42')).accessToken;
    await principal(kept);
    const { user, exp } = await sut.verify(revoked);
    await sut.revoke({ userId: '42', jti: user.credentialId, until: exp * 1000 });
    await expect(principal(revoked)).rejects.toThrow('The access token was revoked');
    expect(sut.verify(kept)).not.toBeInstanceOf(Promise);
    // Held until the token would have expired anyway.
    expect(await kv.ttlSeconds(`access-revoked:jti:${user.credentialId}`)).toBeGreaterThan(890);
  });

  it("refuses every token of a revoked session, and not another session's", async () => {
    const first = (await sut.issue('42', { session: 'session-a' })).accessToken;
    const second = (await sut.issue('42', { session: 'session-a' })).accessToken;
    const other = (await sut.issue('42', { session: 'session-b' })).accessToken;
    await principal(first);
    await sut.revoke({ userId: '42', sid: 'session-a', until: Date.now() + 900_000 });
    await expect(principal(first)).rejects.toThrow('The access token was revoked');
    await expect(principal(second)).rejects.toThrow('The access token was revoked');
    expect((await principal(other)).id).toBe('42');
  });

  it('refuses a revoked token on a replica that started after the revocation (from the key-value store)', async () => {
    const token = (await sut.issue('42', { session: 'session-c' })).accessToken;
    const jti = claimsOf(token).jti as string;
    await sut.revoke({ userId: '42', jti, until: Date.now() + 60_000 });
    await expect(replica().verify(token)).rejects.toThrow('The access token was revoked');
    const ofSession = (await sut.issue('42', { session: 'session-d' })).accessToken;
    await sut.revoke({ userId: '42', sid: 'session-d', until: Date.now() + 60_000 });
    await expect(replica().verify(ofSession)).rejects.toThrow('The access token was revoked');
  });
});
