import { createHash } from 'node:crypto';
import { Injectable, Logger } from '@nestjs/common';
import type { AuthUser } from '../common/auth-user.js';
import { CacheInvalidation, type Invalidation } from '../infra/kv/cache-invalidation.js';
import { ApiTokensRepository, TokenPrincipal } from './api-tokens.repository.js';

/** How long a looked-up token is trusted before the database is asked again: a revocation counts within it. */
const CACHE_MS = 1_000;
const CACHE_MAX = 10_000;
const TOUCH_EVERY_MS = 60_000;
export const API_TOKEN_PATTERN = /^tms_[A-Za-z0-9_-]{43}$/;

/**
 * Turns an API token into its user with one SHA-256 and, at most once a second per token, one indexed query.
 * A revocation, and any change to the token's user, reaches every replica's cache before the request that made it
 * answers (CacheInvalidation); expiry is checked on every use.
 */
@Injectable()
export class ApiTokenAuthenticator {
  private readonly logger = new Logger('ApiTokens');
  private readonly cache = new Map<string, { principal: TokenPrincipal; at: number }>();
  private readonly touched = new Map<string, number>();

  constructor(
    private readonly tokens: ApiTokensRepository,
    private readonly invalidation: CacheInvalidation,
  ) {
    invalidation.onInvalidate((event) => this.onInvalidate(event));
  }

  /** Forgets a revoked token here and on every replica, before resolving (and closes its live sockets there). */
  revoked(tokenHash: string, userId: string): Promise<void> {
    return this.invalidation.invalidate({ kind: 'token', hash: tokenHash, userId });
  }

  private onInvalidate(event: Invalidation): void {
    if (event.kind === 'token') {
      this.cache.delete(event.hash);
    } else if (event.kind === 'user') {
      // A change to a user: their tokens carry their admin flag and enabled state.
      this.forgetUser(event.id);
    }
  }

  private forgetUser(userId: string): void {
    for (const [hash, entry] of this.cache) {
      if (entry.principal.userId === userId) {
        this.cache.delete(hash);
      }
    }
  }

  static hash(token: string): string {
    return createHash('sha256').update(token).digest('hex');
  }

  async authenticate(token: string): Promise<AuthUser | null> {
    if (!API_TOKEN_PATTERN.test(token)) {
      return null;
    }
    const hash = ApiTokenAuthenticator.hash(token);
    const now = Date.now();
    let cached = this.cache.get(hash);
    if (!cached || now - cached.at > CACHE_MS) {
      const principal = await this.tokens.principalByHash(hash);
      if (!principal) {
        this.cache.delete(hash);
        return null;
      }
      if (this.cache.size >= CACHE_MAX) {
        this.cache.clear();
      }
      cached = { principal, at: now };
      this.cache.set(hash, cached);
    }
    const { principal } = cached;
    if (principal.expiresAt && principal.expiresAt.getTime() <= now) {
      return null;
    }
    this.touch(principal.tokenId, now);
    return {
      id: principal.userId,
      admin: principal.admin,
      via: 'API_TOKEN',
      credentialId: principal.tokenId,
      ...(principal.expiresAt ? { expiresAt: principal.expiresAt.getTime() } : {}),
    };
  }

  private touch(tokenId: string, now: number): void {
    const last = this.touched.get(tokenId) ?? 0;
    if (now - last < TOUCH_EVERY_MS) {
      return;
    }
    this.touched.set(tokenId, now);
    this.tokens
      .touch(tokenId)
      .catch((error: unknown) => this.logger.warn(`last-used update failed: ${String(error)}`));
  }
}
