import { createSecretKey } from 'node:crypto';
import { JwtService } from '@nestjs/jwt';
import type { AppConfig } from '../config/app-config.js';
import { AccessTokenService } from './access-token.service.js';

describe(AccessTokenService.name, () => {
  const key = createSecretKey(Buffer.from('a-test-secret-that-is-long-enough-for-hs256'));
  const jwt = new JwtService({ secret: key, signOptions: { algorithm: 'HS256' }, verifyOptions: { algorithms: ['HS256'] } });
  const sut = new AccessTokenService(jwt, { auth: { accessTtlSeconds: 900 } } as AppConfig);

  /** The same token with one claim changed and the original signature kept. */
  function tampered(token: string, change: Record<string, unknown>): string {
    const [header, payload, signature] = token.split('.');
    const claims = { ...JSON.parse(Buffer.from(payload, 'base64url').toString()), ...change };
    return `${header}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.${signature}`;
  }

  it('answers the principal of a token it issued, again and again', async () => {
    const { accessToken } = await sut.issue('42');
    const first = sut.verify(accessToken);
    expect(first).toEqual({ id: '42', admin: false, via: 'JWT', credentialId: expect.any(String) });
    const again = sut.verify(accessToken);
    expect(again).toEqual(first);
    again.admin = true; // the guard sets admin on the principal it gets: that must not leak into the next request
    expect(sut.verify(accessToken).admin).toBe(false);
  });

  it('refuses a token whose claims were changed under a remembered signature', async () => {
    const { accessToken } = await sut.issue('42');
    sut.verify(accessToken);
    expect(() => sut.verify(tampered(accessToken, { sub: '1' }))).toThrow('The access token is invalid');
    expect(sut.verify(accessToken).id).toBe('42');
  });

  it('refuses other tokens signed with the same key, expired tokens and garbage', async () => {
    const challenge = await jwt.signAsync({ sub: '42', typ: '2fa' });
    expect(() => sut.verify(challenge)).toThrow('The access token is invalid');
    const expired = await jwt.signAsync({ sub: '42', typ: 'access' }, { expiresIn: -10, jwtid: 'x' });
    expect(() => sut.verify(expired)).toThrow('The access token has expired; refresh it');
    expect(() => sut.verify('not-a-token')).toThrow('The access token is invalid');
  });
});
