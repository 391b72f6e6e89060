import { Injectable } from '@nestjs/common';
import { CacheInvalidation } from '../infra/kv/cache-invalidation.js';
import type { UserEntity } from './user.entity.js';
import { UsersRepository } from './users.repository.js';

/** How long a user row read for authentication or /me is reused; changes elsewhere count within it. */
const TTL_MS = 1_000;
const MAX_ENTRIES = 10_000;

/**
 * A per-replica, one-second cache of user rows for the hot read paths (GET /api/auth/me, admin checks), so a
 * busy client costs one query a second instead of one a request. A change to a user (disabled, demoted, a new
 * password or second factor) goes through `invalidate`, which every replica has acted on before it resolves
 * (CacheInvalidation): the second is only ever the cost of changes made outside the service.
 */
@Injectable()
export class UserCache {
  private readonly entries = new Map<string, { user: UserEntity | null; at: number }>();

  constructor(
    private readonly users: UsersRepository,
    private readonly invalidation: CacheInvalidation,
  ) {
    invalidation.onInvalidate((event) => {
      if (event.kind === 'user') {
        this.forget(event.id);
      }
    });
  }

  /** Forgets the user's row here and on every replica, before resolving. */
  invalidate(id: string): Promise<void> {
    return this.invalidation.invalidate({ kind: 'user', id });
  }

  async get(id: string): Promise<UserEntity | null> {
    const cached = this.peek(id);
    if (cached !== undefined) {
      return cached;
    }
    const at = Date.now();
    const user = await this.users.findById(id);
    if (this.entries.size >= MAX_ENTRIES) {
      this.entries.clear();
    }
    this.entries.set(id, { user, at });
    return user;
  }

  /**
   * `then` applied to the user row (null: no such user): at once while the row is cached, so the hot paths
   * (the global guard, GET /me) take no promise turn; after reading it otherwise.
   */
  withUser<T>(id: string, then: (user: UserEntity | null) => T): T | Promise<T> {
    const cached = this.peek(id);
    return cached === undefined ? this.get(id).then(then) : then(cached);
  }

  /** The cached row (null: no such user) while it is fresh, without waiting; undefined when it must be read. */
  peek(id: string): UserEntity | null | undefined {
    const hit = this.entries.get(id);
    return hit && Date.now() - hit.at <= TTL_MS ? hit.user : undefined;
  }

  forget(id?: string): void {
    if (id === undefined) {
      this.entries.clear();
    } else {
      this.entries.delete(id);
    }
  }
}
