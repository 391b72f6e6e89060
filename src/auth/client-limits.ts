import { Injectable, Logger } from '@nestjs/common';
import { EventEmitter2 } from '@nestjs/event-emitter';
import type { NextFunction, Request, Response } from 'express';
import { AUDIT_EVENT, AuditRecord } from '../audit/audit.events.js';
import { clientIp } from '../common/decorators.js';
import { rateLimitedFor } from '../common/rate-limit.js';
import { AppConfig } from '../config/app-config.js';
import { KeyValueStore } from '../infra/kv/key-value-store.js';
import { rateLimitAudit } from './rate-limit-audit.js';

interface ClientLimit {
  endpoint: string;
  /** The store's key for one client (its address appended). */
  key: string;
  perMinute: number;
}

/** Requests per client address and minute on register and forgot-password. */
export const ACCOUNT_REQUESTS_PER_MINUTE = 10;

/**
 * The per-client limits of the public endpoints anyone can call, counted in the shared store (so they hold
 * across replicas) before the body is read or validated: a flood of malformed or oversized bodies costs one
 * counter each, and is refused as soon as the limit is reached. Past the limit a client waits 60 seconds.
 */
@Injectable()
export class ClientLimits {
  private readonly log = new Logger('RateLimit');
  private readonly limits: Map<string, ClientLimit>;

  constructor(
    private readonly kv: KeyValueStore,
    private readonly events: EventEmitter2,
    config: AppConfig,
  ) {
    this.limits = new Map([
      [
        '/api/auth/login',
        { endpoint: 'POST /api/auth/login', key: 'throttle:login:', perMinute: config.auth.loginPerMinute },
      ],
      [
        '/api/auth/register',
        {
          endpoint: 'POST /api/auth/register',
          key: 'account:register:',
          perMinute: ACCOUNT_REQUESTS_PER_MINUTE,
        },
      ],
      [
        '/api/auth/forgot-password',
        {
          endpoint: 'POST /api/auth/forgot-password',
          key: 'account:forgot-password:',
          perMinute: ACCOUNT_REQUESTS_PER_MINUTE,
        },
      ],
    ]);
  }

  /** Express middleware; every other request passes straight on. */
  readonly middleware = (req: Request, _res: Response, next: NextFunction): void => {
    // Paths match as Express routes match them: case-insensitively, with or without a trailing slash.
    const limit =
      req.method === 'POST' ? this.limits.get(req.path.toLowerCase().replace(/\/$/, '')) : undefined;
    if (!limit) {
      next();
      return;
    }
    this.check(limit, clientIp(req)).then(() => next(), next);
  };

  private async check(limit: ClientLimit, ip: string): Promise<void> {
    const hit = await this.kv.hitWindow(`${limit.key}${ip}`, 60_000, limit.perMinute, 60_000);
    if (!hit.isBlocked) {
      return;
    }
    const overBy = hit.totalHits - limit.perMinute;
    if (overBy === 1 || overBy % 100 === 0) {
      this.log.warn(`Rate limit hit: ${ip} on ${limit.endpoint} (${hit.totalHits} requests in the window)`);
    }
    this.events.emit(
      AUDIT_EVENT,
      rateLimitAudit(ip, limit.endpoint, { scope: 'client', limit: limit.perMinute }) satisfies AuditRecord,
    );
    throw rateLimitedFor(hit.timeToBlockExpire);
  }
}
