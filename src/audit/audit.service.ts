import { BeforeApplicationShutdown, Injectable, Logger } from '@nestjs/common';
import { OnEvent } from '@nestjs/event-emitter';
import { AppError } from '../common/app-error.js';
import { Page, pageRequest, toPage } from '../common/paging/page.js';
import { AuditEventEntity } from './audit-event.entity.js';
import { AUDIT_EVENT } from './audit.events.js';
import type { AuditRecord } from './audit.events.js';
import { UserCache } from '../users/user-cache.js';
import { AuditRepository, AuditSortField, LabelIds } from './audit.repository.js';
import { AuditEventDto, AuditQueryDto } from './dto/audit-event.dto.js';

const SORTABLE: readonly AuditSortField[] = ['at', 'id', 'type'];

@Injectable()
export class AuditService implements BeforeApplicationShutdown {
  private readonly logger = new Logger('Audit');
  private readonly pending = new Set<Promise<void>>();

  constructor(
    private readonly repository: AuditRepository,
    private readonly users: UserCache,
  ) {}

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
      // Most features name only the actor's id: the trail keeps the address it had then, as the API promises.
      if (event.actorId && !event.actorEmail) {
        event = { ...event, actorEmail: (await this.users.get(event.actorId))?.email ?? null };
      }
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
    const [rows, total] = await this.repository.list(
      { type: query.type, actorId: query.actorId, from, to },
      page,
    );
    const labels = await this.repository.labels(labelIds(rows));
    return toPage(
      rows.map((e) => toAuditEventDto(e, labels)),
      total,
      page,
    );
  }
}

/** Targets whose `kind:id` names a row people know by name (projects, groups) or by email (users). */
const LABELLED = /^(project|group|user):(\d{1,18})$/;

/** The ids a page names: its labelled targets, and the actors recorded without an email (events from before it was kept). */
function labelIds(rows: AuditEventEntity[]): LabelIds {
  const ids: Record<'project' | 'group' | 'user', Set<string>> = {
    project: new Set(),
    group: new Set(),
    user: new Set(),
  };
  for (const e of rows) {
    const target = e.target ? LABELLED.exec(e.target) : null;
    if (target) {
      ids[target[1] as keyof typeof ids].add(target[2]);
    }
    if (e.actorId !== null && !e.actorEmail) {
      ids.user.add(e.actorId);
    }
  }
  return { projects: [...ids.project], groups: [...ids.group], users: [...ids.user] };
}

/** A labelled target's name, or, when its row is gone, what it was with "(deleted)": never a bare `project:1`. */
function targetLabel(target: string | null, labels: Map<string, string>): string | null {
  const match = target ? LABELLED.exec(target) : null;
  if (!match) {
    return null;
  }
  return labels.get(target!) ?? `${match[1]} #${match[2]} (deleted)`;
}

function toAuditEventDto(e: AuditEventEntity, labels: Map<string, string>): AuditEventDto {
  return {
    id: Number(e.id),
    at: e.at.toISOString(),
    type: e.type,
    actorId: e.actorId === null ? null : Number(e.actorId),
    actorEmail: e.actorEmail ?? (e.actorId === null ? null : (labels.get(`user:${e.actorId}`) ?? null)),
    ip: e.ip,
    target: e.target,
    targetLabel: targetLabel(e.target, labels),
    details: e.details,
  };
}
