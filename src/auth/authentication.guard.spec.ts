import { jest } from '@jest/globals';
import type { ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { makeUser } from '../../test/factories/user.factory.js';
import { AppError } from '../common/app-error.js';
import type { AuthUser } from '../common/auth-user.js';
import { AdminOnly, InteractiveOnly, Public } from '../common/decorators.js';
import type { UserEntity } from '../users/user.entity.js';
import { UserCache } from '../users/user-cache.js';
import type { UsersRepository } from '../users/users.repository.js';
import type { AccessTokenService } from './access-token.service.js';
import type { ApiTokenStrategy } from '../api-tokens/api-token.strategy.js';
import { AuthenticationGuard } from './authentication.guard.js';
import { CacheInvalidation } from '../infra/kv/cache-invalidation.js';
import { MemoryKeyValueStore } from '../infra/kv/memory-key-value.store.js';

class Open {
  @Public()
  health(): void {}
}

class Things {
  list(): void {}
  @AdminOnly()
  purge(): void {}
  @InteractiveOnly()
  keys(): void {}
}

@Public()
class PublicClass {
  page(): void {}
}

function contextFor(controller: object, handler: () => void, authorization?: string): ExecutionContext {
  const req = {
    url: '/x',
    rawHeaders: authorization ? ['Authorization', authorization] : [],
    headers: { authorization },
  };
  return {
    getType: () => 'http',
    getHandler: () => handler,
    getClass: () => controller,
    switchToHttp: () => ({ getRequest: () => req }),
  } as unknown as ExecutionContext;
}

const requestOf = (context: ExecutionContext) => context.switchToHttp().getRequest<{ user?: AuthUser }>();

describe(AuthenticationGuard.name, () => {
  const person = makeUser({ id: '7', admin: false });
  const admin = makeUser({ id: '8', admin: true });
  let stored: Map<string, UserEntity | null>;
  let userCache: UserCache;
  let reflector: Reflector;
  let apiToken: { authenticateRequest: ReturnType<typeof jest.fn> };
  let sut: AuthenticationGuard;

  beforeEach(() => {
    // The cache keeps a row for a second: the clock stands still, so "cached" stays cached.
    jest.useFakeTimers();
    stored = new Map([
      [person.id, person],
      [admin.id, admin],
    ]);
    userCache = new UserCache(
      { findById: async (id: string) => stored.get(id) ?? null } as unknown as UsersRepository,
      new CacheInvalidation(new MemoryKeyValueStore()),
    );
    const accessTokens = {
      // `jwt-<user id>` or `jwt-<user id>@<issued at, epoch ms>`.
      verify: (token: string) => {
        const [id, issuedAt] = token.replace('jwt-', '').split('@');
        return {
          user: {
            id,
            admin: false,
            via: 'JWT' as const,
            credentialId: 'j',
            issuedAt: issuedAt === undefined ? undefined : Number(issuedAt),
          },
          exp: 1_900_000_000,
        };
      },
    };
    apiToken = {
      authenticateRequest: jest.fn(
        async (req: { headers: { authorization?: string } }): Promise<AuthUser> => {
          if (req.headers.authorization === 'Bearer tms_revoked') {
            throw AppError.unauthenticated('The API token is invalid, expired or revoked');
          }
          return { id: person.id, admin: false, via: 'API_TOKEN', credentialId: 't' };
        },
      ),
    };
    reflector = new Reflector();
    sut = new AuthenticationGuard(
      reflector,
      accessTokens as unknown as AccessTokenService,
      apiToken as unknown as ApiTokenStrategy,
      userCache,
    );
  });
  afterEach(() => jest.useRealTimers());

  it('lets public routes through without a credential, whether the handler or its class is marked', () => {
    expect(sut.canActivate(contextFor(Open, Open.prototype.health))).toBe(true);
    expect(sut.canActivate(contextFor(PublicClass, PublicClass.prototype.page))).toBe(true);
  });

  it('refuses a guarded route without a credential', () => {
    expect(() => sut.canActivate(contextFor(Things, Things.prototype.list))).toThrow(
      'Authentication is required',
    );
  });

  it('reads the user row the first time and answers synchronously while it is cached, with the same outcome', async () => {
    const first = contextFor(Things, Things.prototype.list, 'Bearer jwt-7');
    const pending = sut.canActivate(first);
    expect(pending).toBeInstanceOf(Promise);
    await expect(pending).resolves.toBe(true);
    const second = contextFor(Things, Things.prototype.list, 'Bearer jwt-7');
    expect(sut.canActivate(second)).toBe(true);
    expect(requestOf(second).user).toEqual({ id: '7', admin: false, via: 'JWT', credentialId: 'j' });
  });

  it('refuses a disabled or deleted account on both paths', async () => {
    stored.set(person.id, makeUser({ id: person.id, enabled: false }));
    await expect(sut.canActivate(contextFor(Things, Things.prototype.list, 'Bearer jwt-7'))).rejects.toThrow(
      'no longer exists or is disabled',
    );
    expect(() => sut.canActivate(contextFor(Things, Things.prototype.list, 'Bearer jwt-7'))).toThrow(
      'no longer exists or is disabled',
    );
    await userCache.get('99'); // cached: no such user
    expect(() => sut.canActivate(contextFor(Things, Things.prototype.list, 'Bearer jwt-99'))).toThrow(
      'no longer exists or is disabled',
    );
  });

  it("refuses access JWTs issued until the user's tokensValidAfter, to the millisecond, on both paths", async () => {
    // A cut-off 400 ms into a second: a token of that same second issued before it is refused, one after it is not.
    const cutOff = Date.parse('2026-11-26T16:00:00.400Z');
    stored.set(person.id, makeUser({ id: person.id, tokensValidAfter: new Date(cutOff) }));
    const at = (issuedAt: number) => contextFor(Things, Things.prototype.list, `Bearer jwt-7@${issuedAt}`);
    await expect(sut.canActivate(at(cutOff - 399))).rejects.toThrow('The session was signed out');
    for (const issuedAt of [cutOff - 399, cutOff - 1, cutOff, cutOff - 60_000]) {
      expect(() => sut.canActivate(at(issuedAt))).toThrow('The session was signed out');
    }
    for (const issuedAt of [cutOff + 1, cutOff + 599, cutOff + 60_000]) {
      expect(sut.canActivate(at(issuedAt))).toBe(true);
    }
    await expect(sut.authenticateToken(`jwt-7@${cutOff}`)).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
    await expect(sut.authenticateToken(`jwt-7@${cutOff + 1}`)).resolves.toMatchObject({ user: { id: '7' } });
    // API tokens have no issue time: they are revoked by deleting them.
    await expect(sut.canActivate(contextFor(Things, Things.prototype.list, 'Bearer tms_abc'))).resolves.toBe(
      true,
    );
  });

  it('applies @AdminOnly per handler, not to its neighbours, and takes admin from the user row', async () => {
    await userCache.get(person.id);
    await userCache.get(admin.id);
    expect(() => sut.canActivate(contextFor(Things, Things.prototype.purge, 'Bearer jwt-7'))).toThrow(
      'Only platform administrators',
    );
    expect(sut.canActivate(contextFor(Things, Things.prototype.list, 'Bearer jwt-7'))).toBe(true);
    const byAdmin = contextFor(Things, Things.prototype.purge, 'Bearer jwt-8');
    expect(sut.canActivate(byAdmin)).toBe(true);
    expect(requestOf(byAdmin).user?.admin).toBe(true);
  });

  it('reads each route’s decorators once', async () => {
    await userCache.get(person.id);
    const spy = jest.spyOn(reflector, 'getAllAndOverride');
    for (let i = 0; i < 5; i++) {
      expect(sut.canActivate(contextFor(Things, Things.prototype.list, 'Bearer jwt-7'))).toBe(true);
    }
    expect(spy).toHaveBeenCalledTimes(3);
  });

  it('keeps API tokens out of @InteractiveOnly routes', async () => {
    await userCache.get(person.id);
    await expect(
      sut.canActivate(contextFor(Things, Things.prototype.keys, 'Bearer tms_abc')),
    ).rejects.toThrow('API tokens cannot manage');
    await expect(sut.canActivate(contextFor(Things, Things.prototype.list, 'Bearer tms_abc'))).resolves.toBe(
      true,
    );
    expect(apiToken.authenticateRequest).toHaveBeenCalledTimes(2);
    expect(sut.canActivate(contextFor(Things, Things.prototype.keys, 'Bearer jwt-7'))).toBe(true);
  });

  describe('authenticateToken (a bare token, as the WebSocket sends it)', () => {
    it('takes an access JWT, with when it expires', async () => {
      await expect(sut.authenticateToken(`jwt-${person.id}`)).resolves.toEqual({
        user: expect.objectContaining({ id: person.id, via: 'JWT' }),
        expiresAt: 1_900_000_000_000,
      });
    });

    it('takes an API token through its strategy, without an expiry', async () => {
      const { user, expiresAt } = await sut.authenticateToken('tms_good');
      expect(user).toEqual(expect.objectContaining({ id: person.id, via: 'API_TOKEN' }));
      expect(expiresAt).toBeUndefined();
      await expect(sut.authenticateToken('tms_revoked')).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
    });

    it('refuses the token of a disabled or deleted account', async () => {
      stored.set(person.id, { ...person, enabled: false });
      await expect(sut.authenticateToken(`jwt-${person.id}`)).rejects.toMatchObject({
        code: 'UNAUTHENTICATED',
      });
      await expect(sut.authenticateToken('jwt-999')).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
    });
  });
});
