import { Injectable } from '@nestjs/common';
import { CacheInvalidation } from '../infra/kv/cache-invalidation.js';
import { LiveSockets } from './live-sockets.js';

/**
 * Closes sockets whose credential was revoked as soon as the revocation reaches this replica, rather than at the
 * next event for one of their projects: a logout (access tokens by id or session), a deleted API token, a password
 * reset or a disabled account (a change to the user, broadcast to every replica's user cache). The re-check waits
 * until every cache has acted on the same broadcast (its handlers run one after the other, synchronously).
 */
@Injectable()
export class LiveRevocations {
  constructor(invalidation: CacheInvalidation, sockets: LiveSockets) {
    invalidation.onInvalidate((event) => {
      const userId =
        event.kind === 'user'
          ? event.id
          : event.kind === 'access' || event.kind === 'token'
            ? event.userId
            : undefined;
      if (userId !== undefined) {
        queueMicrotask(() => sockets.recheckUser(userId));
      }
    });
  }
}
