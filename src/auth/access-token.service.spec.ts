import { createSecretKey } from 'node:crypto';
import { JwtService } from '@nestjs/jwt';
import type { AppConfig } from '../config/app-config.js';
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
  const sut = new AccessTokenService(jwt, config, new JwtStrategy(config));
  const principal = async (token: string) => (await sut.verify(token)).user;

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
    expect(first).toEqual({ id: '42', admin: false, via: 'JWT', credentialId: expect.any(String) });
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
});
