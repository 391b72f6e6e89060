import { Injectable, Logger, OnModuleDestroy } from '@nestjs/common';
import type { RawData, WebSocket } from 'ws';
import { ProjectAccessService } from '../access/project-access.service.js';
import { AppError, ErrorCode, HTTP_STATUS_OF } from '../common/app-error.js';
import type { AuthUser } from '../common/auth-user.js';
import { AuthenticationGuard } from '../auth/authentication.guard.js';
import { AppConfig } from '../config/app-config.js';
import { LiveEvent, LiveRelay } from '../infra/relay/live-relay.js';
import { LimitedLog } from './limited-log.js';

/**
 * Close codes (API.md, Live updates). 1007 (a text frame that is not UTF-8) and 1009 (a frame over 64 KiB) are the
 * ws library's.
 */
export const CLOSE = {
  UNAUTHENTICATED: 4401,
  /** Beyond a cap on sockets (SVC_WS_MAX_*): 4000-4999 are the application's, and 429 says "too many". */
  TOO_MANY_SOCKETS: 4429,
  POLICY: 1008,
  TOO_SLOW: 1013,
  GOING_AWAY: 1001,
} as const;

export const MAX_FRAME_BYTES = 64 * 1024;
/** A socket must authenticate this soon after it opens. */
const AUTH_DEADLINE_MS = 10_000;
/** Frames in a row that are not JSON or not a known type before the socket is closed with 1008. */
const MAX_BAD_FRAMES = 10;
/** Bytes a socket may have waiting to be sent before it counts as not reading (closed with 1013). */
const MAX_BUFFERED_BYTES = 1024 * 1024;
/** After a 1013, the time the client gets to read what is queued and the close frame before it is cut off. */
const SLOW_CLOSE_GRACE_MS = 10_000;
/** How long a subscription's access check holds: a removed member stops receiving within this. */
const ACCESS_TTL_MS = 2_000;
const MAX_SUBSCRIPTIONS = 500;
/** Frames a socket may have waiting while one is handled (a subscription's access check reads the database). */
const MAX_QUEUED_FRAMES = 100;
/** After a 4429, the time the client gets to read the error and the close frame before it is cut off. */
const REFUSED_CLOSE_GRACE_MS = 2_000;

interface Client {
  ws: WebSocket;
  /** The client's address (X-Forwarded-For from SVC_TRUSTED_PROXIES only), which its socket is counted under. */
  address: string;
  user?: AuthUser;
  token?: string;
  authTimer?: NodeJS.Timeout;
  projects: Set<string>;
  badFrames: number;
  alive: boolean;
  /** Frames are handled one after the other (an auth completes before the subscribe sent after it). */
  queue: Promise<void>;
  queued: number;
}

interface AccessCheck {
  until: number;
  /** undefined: allowed; else why not. */
  denied?: AppError;
  pending?: Promise<void>;
}

/**
 * The sockets of this replica and what they are subscribed to. Every event comes from the relay (this replica's
 * own ones too, once they have gone round the broker), is serialised once and sent to the project's subscribers
 * whose access still holds: credential and role are re-checked at most every ACCESS_TTL_MS per user and project.
 */
@Injectable()
export class LiveSockets implements OnModuleDestroy {
  private readonly log = new Logger('LiveSockets');
  private readonly clients = new Set<Client>();
  private readonly byProject = new Map<string, Set<Client>>();
  private readonly access = new Map<string, AccessCheck>();
  private readonly pinger: NodeJS.Timeout;
  private readonly pingIntervalMs: number;
  /** Open sockets per client address, per address those not authenticated yet, and per authenticated user. */
  private readonly perAddress = new Map<string, number>();
  private readonly unauthenticatedPerAddress = new Map<string, number>();
  private readonly perUser = new Map<string, number>();
  private readonly caps: AppConfig['live'];
  /** What clients do wrong, which anyone can repeat at will: rate-limited, one line without a stack each. */
  private readonly clientFaults = new LimitedLog(this.log);

  constructor(
    private readonly auth: AuthenticationGuard,
    private readonly projects: ProjectAccessService,
    private readonly relay: LiveRelay,
    config: AppConfig,
  ) {
    this.pingIntervalMs = config.live.pingIntervalMs;
    this.caps = config.live;
    this.pinger = setInterval(() => this.pingAll(), this.pingIntervalMs).unref();
    relay.listen({ event: (event) => this.deliver(event), resync: () => this.resyncAll() });
  }

  get size(): number {
    return this.clients.size;
  }

  /**
   * Takes on a socket from `address`, or refuses it (4429) when the address holds SVC_WS_MAX_PER_ADDRESS sockets
   * already, or SVC_WS_MAX_UNAUTHENTICATED_PER_ADDRESS that have not authenticated yet. Counted on this replica.
   */
  accept(ws: WebSocket, address: string): void {
    const open = this.perAddress.get(address) ?? 0;
    const unauthenticated = this.unauthenticatedPerAddress.get(address) ?? 0;
    if (open >= this.caps.maxPerAddress) {
      return this.refuse(ws, address, `${open} sockets are open from this address (SVC_WS_MAX_PER_ADDRESS)`);
    }
    if (unauthenticated >= this.caps.maxUnauthenticatedPerAddress) {
      return this.refuse(
        ws,
        address,
        `${unauthenticated} sockets from this address have not authenticated yet (SVC_WS_MAX_UNAUTHENTICATED_PER_ADDRESS)`,
      );
    }
    addTo(this.perAddress, address, 1);
    addTo(this.unauthenticatedPerAddress, address, 1);
    const client: Client = {
      ws,
      address,
      projects: new Set(),
      badFrames: 0,
      alive: true,
      queue: Promise.resolve(),
      queued: 0,
    };
    this.clients.add(client);
    client.authTimer = setTimeout(
      () => ws.close(CLOSE.UNAUTHENTICATED, 'Not authenticated within 10 seconds'),
      AUTH_DEADLINE_MS,
    );
    ws.on('message', (data, isBinary) => {
      if (++client.queued > MAX_QUEUED_FRAMES) {
        ws.close(CLOSE.POLICY, 'Too many frames waiting to be handled');
        return;
      }
      client.queue = client.queue
        .then(() => this.onFrame(client, data, isBinary))
        .finally(() => client.queued--);
    });
    ws.on('pong', () => (client.alive = true));
    ws.on('close', () => this.drop(client));
    // ws closes by itself after a protocol error (1007 for a text frame that is not UTF-8, 1009 for a frame over
    // 64 KiB): cutting the socket then would lose that close frame. Anything else ends the socket. Either is the
    // client's doing, not a fault of the service.
    ws.on('error', (error: Error) => {
      this.clientFaults.warn(address, `A live socket from ${address} was closed: ${error.message}`);
      if (ws.readyState !== ws.CLOSING && ws.readyState !== ws.CLOSED) {
        ws.terminate();
      }
    });
  }

  onModuleDestroy(): void {
    clearInterval(this.pinger);
    for (const client of this.clients) {
      client.ws.close(CLOSE.GOING_AWAY, 'The server is shutting down');
    }
  }

  /**
   * Refuses a socket beyond a cap: an error message saying which, then 4429. The client gets a moment to read them
   * and answer the close; a socket refused holds nothing meanwhile, and is cut off after it.
   */
  private refuse(ws: WebSocket, address: string, why: string): void {
    this.clientFaults.warn(address, `Refused a live socket from ${address}: ${why}`);
    ws.on('error', () => undefined);
    const message = `Too many live sockets: ${why}; close one and retry`;
    ws.send(JSON.stringify({ type: 'error', status: HTTP_STATUS_OF[ErrorCode.RATE_LIMITED], message }));
    ws.close(CLOSE.TOO_MANY_SOCKETS, 'Too many sockets');
    setTimeout(() => ws.terminate(), REFUSED_CLOSE_GRACE_MS).unref();
  }

  private drop(client: Client): void {
    if (!this.clients.delete(client)) {
      return;
    }
    clearTimeout(client.authTimer);
    addTo(this.perAddress, client.address, -1);
    if (client.user) {
      addTo(this.perUser, client.user.id, -1);
    } else {
      addTo(this.unauthenticatedPerAddress, client.address, -1);
    }
    for (const projectId of client.projects) {
      this.unsubscribed(client, projectId);
    }
  }

  private async onFrame(client: Client, data: RawData, isBinary: boolean): Promise<void> {
    let message: unknown;
    try {
      message = isBinary ? undefined : JSON.parse(textOf(data));
    } catch {
      message = undefined;
    }
    const type = (message as { type?: unknown } | null)?.type;
    if (
      typeof message !== 'object' ||
      message === null ||
      Array.isArray(message) ||
      typeof type !== 'string'
    ) {
      return this.badFrame(client, 'A frame must be a JSON object with a "type"');
    }
    const body = message as Record<string, unknown>;
    try {
      switch (type) {
        case 'auth':
          client.badFrames = 0;
          return await this.authenticate(client, body.token);
        case 'subscribe':
        case 'unsubscribe': {
          client.badFrames = 0;
          const projectId = projectIdOf(body.projectId);
          if (!client.user) {
            throw AppError.unauthenticated(
              'Authenticate first: {"type": "auth", "token": "<access JWT or API token>"}',
            );
          }
          return type === 'subscribe'
            ? await this.subscribe(client, projectId)
            : this.unsubscribe(client, projectId);
        }
        default:
          return this.badFrame(client, `Unknown message type "${type}": auth, subscribe or unsubscribe`);
      }
    } catch (error) {
      this.sendError(client, error, typeof body.projectId === 'number' ? { projectId: body.projectId } : {});
    }
  }

  private badFrame(client: Client, message: string): void {
    client.badFrames++;
    this.sendError(client, AppError.validation(message));
    if (client.badFrames >= MAX_BAD_FRAMES) {
      client.ws.close(CLOSE.POLICY, 'Too many malformed frames');
    }
  }

  private async authenticate(client: Client, token: unknown): Promise<void> {
    if (typeof token !== 'string' || !token) {
      throw AppError.validation('auth needs "token": an access JWT or an API token');
    }
    const { user, expiresAt } = await this.auth.authenticateToken(token);
    if (!this.clients.has(client)) {
      // Gone while the token was checked: nothing to keep, no timer to set.
      return;
    }
    if (client.user && client.user.id !== user.id) {
      throw AppError.forbidden('A socket stays with the user it authenticated as: open another one');
    }
    if (!client.user) {
      const open = this.perUser.get(user.id) ?? 0;
      if (open >= this.caps.maxPerUser) {
        // Let go of it at once: while it closes, it counts against nothing.
        this.drop(client);
        return this.refuse(
          client.ws,
          client.address,
          `${open} sockets are open for this user (SVC_WS_MAX_PER_USER)`,
        );
      }
      addTo(this.perUser, user.id, 1);
      addTo(this.unauthenticatedPerAddress, client.address, -1);
    }
    client.user = user;
    client.token = token;
    clearTimeout(client.authTimer);
    client.authTimer = undefined;
    if (expiresAt !== undefined) {
      // A socket lives as long as its token (an access token, an API token with an expiry); a fresh `auth` before
      // then moves the deadline.
      const what = user.via === 'API_TOKEN' ? 'API key' : 'access token';
      client.authTimer = setTimeout(
        () => client.ws.close(CLOSE.UNAUTHENTICATED, `The ${what} expired: send a fresh auth`),
        timerDelay(expiresAt - Date.now()),
      );
    }
  }

  private async subscribe(client: Client, projectId: string): Promise<void> {
    if (!client.projects.has(projectId) && client.projects.size >= MAX_SUBSCRIPTIONS) {
      throw AppError.validation(`A socket subscribes to at most ${MAX_SUBSCRIPTIONS} projects`);
    }
    await this.projects.require(client.user!, projectId, 'VIEWER');
    if (client.ws.readyState !== client.ws.OPEN) {
      return;
    }
    client.projects.add(projectId);
    let subscribers = this.byProject.get(projectId);
    if (!subscribers) {
      subscribers = new Set();
      this.byProject.set(projectId, subscribers);
    }
    subscribers.add(client);
    this.send(client, JSON.stringify({ type: 'subscribed', projectId: Number(projectId) }));
  }

  private unsubscribe(client: Client, projectId: string): void {
    this.unsubscribed(client, projectId);
    this.send(client, JSON.stringify({ type: 'unsubscribed', projectId: Number(projectId) }));
  }

  private unsubscribed(client: Client, projectId: string): void {
    client.projects.delete(projectId);
    const subscribers = this.byProject.get(projectId);
    subscribers?.delete(client);
    if (subscribers?.size === 0) {
      this.byProject.delete(projectId);
    }
  }

  /** One event to the project's subscribers on this replica. */
  private deliver(event: LiveEvent): void {
    const subscribers = this.byProject.get(event.projectId);
    if (!subscribers?.size) {
      return;
    }
    const frame = JSON.stringify({
      type: 'event',
      projectId: Number(event.projectId),
      event: event.event,
      data: event.data,
      at: event.at,
    });
    const now = Date.now();
    for (const client of [...subscribers]) {
      const check = this.accessOf(client, event.projectId, now);
      if (!check.pending) {
        this.deliverChecked(client, event.projectId, check, frame);
      } else {
        void check.pending.then(() => this.deliverChecked(client, event.projectId, check, frame));
      }
    }
  }

  private deliverChecked(client: Client, projectId: string, check: AccessCheck, frame: string): void {
    if (!client.projects.has(projectId)) {
      return;
    }
    if (!check.denied) {
      this.send(client, frame);
      return;
    }
    if (check.denied.code === 'UNAUTHENTICATED') {
      client.ws.close(CLOSE.UNAUTHENTICATED, 'The credential is no longer valid');
      return;
    }
    // The role went: the subscription ends, and the client is told why.
    this.unsubscribed(client, projectId);
    this.sendError(client, check.denied, { projectId: Number(projectId) });
  }

  /**
   * Whether the client's credential and role still allow the project's events, checked at most every
   * ACCESS_TTL_MS for the same credential and project (a thousand sockets of one user cost one check).
   */
  private accessOf(client: Client, projectId: string, now: number): AccessCheck {
    const user = client.user!;
    const key = `${user.via}:${user.credentialId}:${user.id}:${projectId}`;
    const known = this.access.get(key);
    if (known && (known.pending || known.until > now)) {
      return known;
    }
    if (this.access.size > 10_000) {
      this.access.clear();
    }
    // On a failed check (the database away for a moment) the last verdict stands, uncached: the next event asks
    // again. A valid credential is never refused for it.
    const check: AccessCheck = { until: 0, denied: known?.denied };
    check.pending = (async () => {
      try {
        await this.auth.authenticateToken(client.token!);
        await this.projects.require(user, projectId, 'VIEWER');
        check.denied = undefined;
        check.until = Date.now() + ACCESS_TTL_MS;
      } catch (error) {
        if (error instanceof AppError && error.code !== ErrorCode.UNAVAILABLE) {
          check.denied = error;
          check.until = Date.now() + ACCESS_TTL_MS;
        } else {
          this.log.warn(`A live subscription's access could not be checked: ${(error as Error).message}`);
        }
      } finally {
        check.pending = undefined;
      }
    })();
    this.access.set(key, check);
    return check;
  }

  private resyncAll(): void {
    const frame = JSON.stringify({ type: 'resync' });
    for (const client of this.clients) {
      if (client.user) {
        this.send(client, frame);
      }
    }
  }

  /** Pings every socket; one that did not answer the last ping is gone. */
  private pingAll(): void {
    for (const client of this.clients) {
      if (!client.alive) {
        client.ws.terminate();
        continue;
      }
      client.alive = false;
      client.ws.ping();
    }
  }

  private send(client: Client, frame: string): void {
    const { ws } = client;
    if (ws.readyState !== ws.OPEN) {
      return;
    }
    if (ws.bufferedAmount > MAX_BUFFERED_BYTES) {
      ws.close(CLOSE.TOO_SLOW, 'Too slow to read its events');
      setTimeout(() => ws.terminate(), SLOW_CLOSE_GRACE_MS).unref();
      return;
    }
    ws.send(frame);
  }

  private sendError(client: Client, error: unknown, extra: Record<string, unknown> = {}): void {
    if (!(error instanceof AppError)) {
      this.log.error(`A live message failed: ${(error as Error).stack ?? String(error)}`);
    }
    const status = error instanceof AppError ? HTTP_STATUS_OF[error.code] : 500;
    const message = error instanceof AppError ? error.message : 'Internal error';
    this.send(client, JSON.stringify({ type: 'error', status, message, ...extra }));
  }

  /**
   * Checks again, at once, the credential of each of the user's sockets on this replica (a revocation reached it:
   * see LiveRevocations), and closes with 4401 those it no longer admits. Each distinct token is checked once.
   */
  recheckUser(userId: string): void {
    const checks = new Map<string, Promise<boolean>>();
    for (const client of this.clients) {
      const token = client.token;
      if (client.user?.id !== userId || token === undefined) {
        continue;
      }
      let admitted = checks.get(token);
      if (!admitted) {
        admitted = this.auth.authenticateToken(token).then(
          () => true,
          // Only a refused credential closes a socket; a check that failed (the database away) proves nothing.
          (error: unknown) => !(error instanceof AppError && error.code === ErrorCode.UNAUTHENTICATED),
        );
        checks.set(token, admitted);
      }
      void admitted.then((ok) => {
        if (!ok && client.token === token) {
          client.ws.close(CLOSE.UNAUTHENTICATED, 'The credential is no longer valid');
        }
      });
    }
  }
}

/** Adds `delta` to a count of open sockets, removing the key at zero (no key outlives its sockets). */
function addTo(counts: Map<string, number>, key: string, delta: number): void {
  const count = (counts.get(key) ?? 0) + delta;
  if (count > 0) {
    counts.set(key, count);
  } else {
    counts.delete(key);
  }
}

/** A project id as a subscription names it: a positive integer (or its digits). */
function projectIdOf(value: unknown): string {
  if (
    (typeof value === 'number' && Number.isSafeInteger(value) && value > 0) ||
    (typeof value === 'string' && /^[1-9]\d{0,15}$/.test(value))
  ) {
    return String(value);
  }
  throw AppError.validation('projectId must be a positive integer');
}

/** A text frame's data as a string (ws hands a Buffer, or Buffer pieces of a fragmented frame). */
function textOf(data: RawData): string {
  return Buffer.isBuffer(data)
    ? data.toString('utf8')
    : Array.isArray(data)
      ? Buffer.concat(data).toString('utf8')
      : Buffer.from(data).toString('utf8');
}

/** setTimeout's delay for `ms`, within what timers take (over 2^31 - 1 ms they fire at once). */
export function timerDelay(ms: number): number {
  return Math.min(Math.max(0, ms), 2 ** 31 - 1);
}
