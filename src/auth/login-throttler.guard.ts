import { ExecutionContext, Injectable, Logger } from '@nestjs/common';
import { EventEmitter2 } from '@nestjs/event-emitter';
import { InjectThrottlerOptions, InjectThrottlerStorage, ThrottlerGuard } from '@nestjs/throttler';
import type { ThrottlerLimitDetail, ThrottlerModuleOptions, ThrottlerStorage } from '@nestjs/throttler';
import { Reflector } from '@nestjs/core';
import type { Request } from 'express';
import { AppError } from '../common/app-error.js';
import { clientIp } from '../common/decorators.js';
import { AUDIT_EVENT, AuditRecord } from '../audit/audit.events.js';
import { rateLimitAudit } from './rate-limit-audit.js';

/** Counts requests per client address (X-Forwarded-For only from trusted proxies) in the shared store. */
@Injectable()
export class LoginThrottlerGuard extends ThrottlerGuard {
  private readonly log = new Logger('RateLimit');

  constructor(
    @InjectThrottlerOptions() options: ThrottlerModuleOptions,
    @InjectThrottlerStorage() storage: ThrottlerStorage,
    reflector: Reflector,
    private readonly events: EventEmitter2,
  ) {
    super(options, storage, reflector);
  }

  protected override getTracker(req: Record<string, unknown>): Promise<string> {
    return Promise.resolve(clientIp(req as unknown as Request));
  }

  protected override throwThrottlingException(context: ExecutionContext, detail: ThrottlerLimitDetail): Promise<void> {
    const req = context.switchToHttp().getRequest<Request>();
    const endpoint = `${req.method} ${req.route?.path ?? req.path}`;
    const ip = clientIp(req);
    const overBy = detail.totalHits - detail.limit;
    if (overBy === 1 || overBy % 100 === 0) {
      this.log.warn(`Rate limit hit: ${ip} on ${endpoint} (${detail.totalHits} requests in the window)`);
    }
    this.events.emit(AUDIT_EVENT, rateLimitAudit(ip, endpoint, { scope: 'client', limit: detail.limit }) satisfies AuditRecord);
    throw AppError.rateLimited();
  }
}
