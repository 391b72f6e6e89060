import { Injectable } from '@nestjs/common';
import { EventEmitter2 } from '@nestjs/event-emitter';
import { AUDIT_EVENT } from '../audit/audit.events.js';
import type { AuditRecord, AuditType } from '../audit/audit.events.js';
import type { AuthUser } from '../common/auth-user.js';
import { UserCache } from '../users/user-cache.js';

/** Records administrative changes with the acting admin's id and email, as a domain event. */
@Injectable()
export class AdminAudit {
  constructor(
    private readonly users: UserCache,
    private readonly events: EventEmitter2,
  ) {}

  async record(
    actor: AuthUser,
    ip: string,
    type: AuditType,
    target: string,
    details: Record<string, unknown>,
  ): Promise<void> {
    const actorEmail = (await this.users.get(actor.id))?.email ?? null;
    this.events.emit(AUDIT_EVENT, {
      type,
      actorId: actor.id,
      actorEmail,
      ip,
      target,
      details,
    } satisfies AuditRecord);
  }
}

/** A database id as the API accepts it: a positive 64-bit integer written in decimal. */
export function isDbId(id: string): boolean {
  return /^[1-9]\d{0,18}$/.test(id) && BigInt(id) <= 9_223_372_036_854_775_807n;
}
