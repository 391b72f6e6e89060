import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import type { PageRequest } from '../common/paging/page.js';
import { AuditEventEntity } from './audit-event.entity.js';
import type { AuditRecord } from './audit.events.js';

export interface AuditFilter {
  type?: string;
  actorId?: string;
  from?: Date;
  to?: Date;
}

export type AuditSortField = 'at' | 'id' | 'type';

@Injectable()
export class AuditRepository {
  constructor(@InjectRepository(AuditEventEntity) private readonly events: Repository<AuditEventEntity>) {}

  async insert(record: AuditRecord): Promise<void> {
    await this.events.insert({
      type: record.type,
      actorId: record.actorId ?? null,
      actorEmail: record.actorEmail ?? null,
      ip: record.ip ?? null,
      target: record.target ?? null,
      details: (record.details ?? {}) as never,
    });
  }

  /** Inserts the first occurrence, or counts one more on the row with the same aggregate key; returns the count. */
  async upsertAggregate(record: AuditRecord & { aggregateKey: string }): Promise<number> {
    const rows: { count: number }[] = await this.events.query(
      `INSERT INTO audit_events (type, actor_id, actor_email, ip, target, details, aggregate_key)
       VALUES ($1, $2, $3, $4, $5, $6::jsonb || jsonb_build_object('count', 1, 'lastAt', now()), $7)
       ON CONFLICT (aggregate_key) DO UPDATE
         SET details = audit_events.details || jsonb_build_object(
               'count', (audit_events.details->>'count')::int + 1, 'lastAt', now())
       RETURNING (details->>'count')::int AS count`,
      [
        record.type,
        record.actorId ?? null,
        record.actorEmail ?? null,
        record.ip ?? null,
        record.target ?? null,
        JSON.stringify(record.details ?? {}),
        record.aggregateKey,
      ],
    );
    return rows[0].count;
  }

  list(filter: AuditFilter, page: PageRequest<AuditSortField>): Promise<[AuditEventEntity[], number]> {
    const query = this.events.createQueryBuilder('e');
    if (filter.type) {
      query.andWhere('e.type = :type', { type: filter.type });
    }
    if (filter.actorId) {
      query.andWhere('e.actor_id = :actorId', { actorId: filter.actorId });
    }
    if (filter.from) {
      query.andWhere('e.at >= :from', { from: filter.from });
    }
    if (filter.to) {
      query.andWhere('e.at < :to', { to: filter.to });
    }
    for (const { field, direction } of page.sort) {
      query.addOrderBy(`e.${field}`, direction);
    }
    if (!page.sort.some((s) => s.field === 'id')) {
      query.addOrderBy('e.id', 'DESC');
    }
    return query.offset(page.offset).limit(page.size).getManyAndCount();
  }
}
