import { BeforeApplicationShutdown, Injectable, Logger } from '@nestjs/common';
import { OnEvent } from '@nestjs/event-emitter';
import { AppError } from '../common/app-error.js';
import { Page, pageRequest, toPage } from '../common/paging/page.js';
import { AuditEventEntity } from './audit-event.entity.js';
import { AUDIT_EVENT } from './audit.events.js';
import type { AuditRecord } from './audit.events.js';
import { AuditRepository, AuditSortField } from './audit.repository.js';
import { AuditEventDto, AuditQueryDto } from './dto/audit-event.dto.js';

const SORTABLE: readonly AuditSortField[] = ['at', 'id', 'type'];

@Injectable()
export class AuditService implements BeforeApplicationShutdown {
  private readonly logger = new Logger('Audit');
  private readonly pending = new Set<Promise<void>>();

  constructor(private readonly repository: AuditRepository) {}

  @OnEvent(AUDIT_EVENT, { async: true, promisify: true })
  record(event: AuditRecord): Promise<void> {
    const write = this.write(event).finally(() => this.pending.delete(write));
    this.pending.add(write);
    return write;
  }

  /** Lets events emitted by the last requests reach the database before connections close. */
  async beforeApplicationShutdown(): Promise<void> {
    await Promise.allSettled([...this.pending]);
  }

  private async write(event: AuditRecord): Promise<void> {
    try {
      if (event.aggregateKey) {
        await this.repository.upsertAggregate({ ...event, aggregateKey: event.aggregateKey });
      } else {
        await this.repository.insert(event);
      }
    } catch (error) {
      // The audit trail must never break the request that caused the event.
      this.logger.error(`Could not record ${event.type}: ${(error as Error).message}`);
    }
  }

  async list(query: AuditQueryDto): Promise<Page<AuditEventDto>> {
    const page = pageRequest(query, SORTABLE, [{ field: 'at', direction: 'DESC' }]);
    const from = query.from ? new Date(query.from) : undefined;
    const to = query.to ? new Date(query.to) : undefined;
    if (from && to && from > to) {
      throw AppError.validation('from must not be after to');
    }
    const [rows, total] = await this.repository.list({ type: query.type, actorId: query.actorId, from, to }, page);
    return toPage(rows.map(toAuditEventDto), total, page);
  }
}

function toAuditEventDto(e: AuditEventEntity): AuditEventDto {
  return {
    id: Number(e.id),
    at: e.at.toISOString(),
    type: e.type,
    actorId: e.actorId === null ? null : Number(e.actorId),
    actorEmail: e.actorEmail,
    ip: e.ip,
    target: e.target,
    details: e.details,
  };
}
