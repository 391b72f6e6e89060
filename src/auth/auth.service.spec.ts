import type { DirectoryLogin } from '../ldap/directory-login.service.js';
import { jest } from '@jest/globals';
import type { EventEmitter2 } from '@nestjs/event-emitter';
import { makeUser } from '../../test/factories/user.factory.js';
import { AppError } from '../common/app-error.js';
import type { AppConfig } from '../config/app-config.js';
import { MemoryKeyValueStore } from '../infra/kv/memory-key-value.store.js';
import type { PasswordHasher } from '../users/password-hasher.js';
import type { UserCache } from '../users/user-cache.js';
import type { UsersRepository } from '../users/users.repository.js';
import type { AccessTokenService } from './access-token.service.js';
import { AuthService } from './auth.service.js';
import type { RefreshTokenService } from './refresh-token.service.js';
import type { TwoFactorService } from '../two-factor/two-factor.service.js';

describe(AuthService.name, () => {
  const user = makeUser({ id: '5', email: 'ada@example.com', passwordHash: 'hash' });
  const guarded = makeUser({
    id: '6',
    email: 'grace@example.com',
    passwordHash: 'hash',
    twoFactorEnabled: true,
  });
  const challenge = { twoFactorRequired: true as const, challengeToken: 'challenge', expiresIn: 300 };
  let accessTokens: { issue: ReturnType<typeof jest.fn> };
  let kv: MemoryKeyValueStore;
  let hasher: { verify: ReturnType<typeof jest.fn>; verifyDummy: ReturnType<typeof jest.fn> };
  let events: { emit: ReturnType<typeof jest.fn> };
  let sut: AuthService;

  beforeEach(() => {
    kv = new MemoryKeyValueStore();
    hasher = {
      verify: jest.fn(async (_h: string, p: string) => p === 'right'),
      verifyDummy: jest.fn(async () => false),
    };
    events = { emit: jest.fn() };
    const users = {
      findByEmail: jest.fn(async (e: string) => [user, guarded].find((u) => u.email === e) ?? null),
    };
    accessTokens = {
      issue: jest.fn(async () => ({ accessToken: 'jwt', tokenType: 'Bearer', expiresIn: 900 })),
    };
    sut = new AuthService(
      users as unknown as UsersRepository,
      { get: users.findByEmail } as unknown as UserCache,
      hasher as unknown as PasswordHasher,
      accessTokens as unknown as AccessTokenService,
      { issue: jest.fn(async () => 'refresh') } as unknown as RefreshTokenService,
      kv,
      { auth: { loginFailuresPerAccountHour: 3 } } as AppConfig,
      events as unknown as EventEmitter2,
      { startChallenge: jest.fn(async () => challenge) } as unknown as TwoFactorService,
      { enabled: false } as DirectoryLogin,
    );
  });
  afterEach(() => kv.close());

  it('hashes a dummy password for an unknown user, so refusing takes as long as for a wrong password', async () => {
    await expect(sut.login({ username: 'nobody@example.com', password: 'x' }, '1.2.3.4')).rejects.toThrow(
      'Invalid username or password',
    );
    expect(hasher.verifyDummy).toHaveBeenCalledWith('x');
  });

  it('signs in with the email in any case and records the success', async () => {
    const signedIn = await sut.login({ username: ' ADA@example.com ', password: 'right' }, '1.2.3.4');
    expect(signedIn).toEqual({
      access: expect.objectContaining({ accessToken: 'jwt' }),
      refreshToken: 'refresh',
    });
    expect(events.emit).toHaveBeenCalledWith(
      'audit.record',
      expect.objectContaining({ type: 'LOGIN_SUCCESS', actorId: '5', ip: '1.2.3.4' }),
    );
  });

  it('blocks an account after its failure limit, even with the right password', async () => {
    for (let i = 0; i < 3; i++) {
      await expect(sut.login({ username: user.email, password: 'wrong' }, 'ip')).rejects.toThrow(AppError);
    }
    const blocked = sut.login({ username: user.email, password: 'right' }, 'ip');
    await expect(blocked).rejects.toMatchObject({ code: 'RATE_LIMITED' });
    expect(hasher.verify).toHaveBeenCalledTimes(3);
  });

  it('answers a passing password step of a two-factor user with a challenge only: no tokens, no success yet', async () => {
    await expect(sut.login({ username: guarded.email, password: 'right' }, 'ip')).resolves.toEqual(challenge);
    expect(accessTokens.issue).not.toHaveBeenCalled();
    expect(events.emit).not.toHaveBeenCalledWith(
      'audit.record',
      expect.objectContaining({ type: 'LOGIN_SUCCESS' }),
    );
  });
});
