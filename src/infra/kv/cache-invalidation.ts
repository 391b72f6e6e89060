import { randomUUID } from 'node:crypto';
import { Injectable, Logger, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { KeyValueStore } from './key-value-store.js';

/**
 * What a replica forgets: a user's cached row (and their cached API tokens), one API token by its hash, or access
 * JWTs of a user by their id (`jti`) or session (`sid`), refused until `until` (epoch ms, when they all expire).
 */
export type Invalidation =
  | { kind: 'user'; id: string }
  /** `userId`: the token's user, whose live sockets are checked again (absent in a message from a release before). */
  | { kind: 'token'; hash: string; userId?: string }
  | { kind: 'access'; userId: string; jti?: string; sid?: string; until: number };

type Handler = (event: Invalidation) => void;

/** How long a revoking request waits for every replica's acknowledgement before answering anyway. */
const ACK_TIMEOUT_MS = 2_000;

/**
 * Makes a revocation (an API key deleted, a user disabled, a password or two-factor change) reach every replica's
 * caches before the request that made it answers: the caches on the hot paths (UserCache, the API-token cache)
 * are per replica and trusted for a second, which would let another replica accept a revoked credential for up to
 * that second.
 *
 * With Redis, `invalidate` publishes the event on the store's pub/sub channel; every replica (this one too) forgets
 * and acknowledges on the publisher's own channel; the call resolves once as many replicas as the publish reached
 * have acknowledged (or after ACK_TIMEOUT_MS, logged: a replica that stopped answering meanwhile). Nothing is asked
 * of Redis on the request path: only writes that revoke pay the round trips. In process (one replica) it only
 * forgets here.
 */
@Injectable()
export class CacheInvalidation implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger('CacheInvalidation');
  private readonly handlers: Handler[] = [];
  private readonly replica = randomUUID();
  /** Invalidations this replica published, awaiting acknowledgements: `expected` is known once the publish answers. */
  private readonly pending = new Map<string, { acked: number; expected?: number; done: () => void }>();
  private unsubscribe: (() => Promise<void>) | undefined;

  constructor(private readonly store: KeyValueStore) {}

  /** A cache's way to forget: called for every invalidation, from this replica or another. */
  onInvalidate(handler: Handler): void {
    this.handlers.push(handler);
  }

  async onModuleInit(): Promise<void> {
    if (this.store.kind !== 'redis') {
      return;
    }
    const events = await this.store.subscribe('invalidate', (message) => {
      const { from, seq, event } = JSON.parse(message) as { from: string; seq: string; event: Invalidation };
      this.apply(event);
      void this.store.publish(`invalidate-ack:${from}`, seq).catch((error: unknown) => {
        this.logger.warn(`could not acknowledge an invalidation: ${String(error)}`);
      });
    });
    const acks = await this.store.subscribe(`invalidate-ack:${this.replica}`, (seq) => {
      const waiting = this.pending.get(seq);
      if (waiting) {
        waiting.acked++;
        if (waiting.expected !== undefined && waiting.acked >= waiting.expected) {
          waiting.done();
        }
      }
    });
    this.unsubscribe = async () => {
      await events();
      await acks();
    };
  }

  async onApplicationShutdown(): Promise<void> {
    await this.unsubscribe?.();
  }

  /** Forgets here at once, and (with Redis) on every replica before resolving. */
  async invalidate(event: Invalidation): Promise<void> {
    this.apply(event);
    if (this.store.kind !== 'redis') {
      return;
    }
    const seq = randomUUID();
    let timer: NodeJS.Timeout | undefined;
    const acknowledged = new Promise<boolean>((resolve) => {
      this.pending.set(seq, { acked: 0, done: () => resolve(true) });
      timer = setTimeout(() => resolve(false), ACK_TIMEOUT_MS);
    });
    try {
      const waiting = this.pending.get(seq)!;
      // The number of replicas subscribed when Redis delivered it; acknowledgements may come in before it does.
      waiting.expected = await this.store.publish(
        'invalidate',
        JSON.stringify({ from: this.replica, seq, event }),
      );
      if (waiting.acked >= waiting.expected) {
        waiting.done();
      }
      if (!(await acknowledged)) {
        this.logger.warn(
          `an invalidation (${event.kind}) was not acknowledged by every replica within ${ACK_TIMEOUT_MS} ms`,
        );
      }
    } finally {
      clearTimeout(timer);
      this.pending.delete(seq);
    }
  }

  private apply(event: Invalidation): void {
    for (const handler of this.handlers) {
      handler(event);
    }
  }
}
