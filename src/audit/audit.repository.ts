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

/** The ids a page of events names, by kind: the targets it concerns and the actors it has no email for. */
export interface LabelIds {
  projects: string[];
  groups: string[];
  users: string[];
}

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

  /**
   * What people call the things a page of events names, in one query for the whole page (never one a row): a
   * project's and a group's name, a user's email, keyed `project:1`, `group:2`, `user:3` as targets are written.
   * Ids that are gone (a deleted project, also while it is being purged) are simply absent.
   */
  async labels(ids: LabelIds): Promise<Map<string, string>> {
    if (!ids.projects.length && !ids.groups.length && !ids.users.length) {
      return new Map();
    }
    const rows: { key: string; label: string }[] = await this.events.query(
      `SELECT 'project:' || id AS key, name AS label FROM projects WHERE id = ANY($1::bigint[]) AND deleting_at IS NULL
       UNION ALL SELECT 'group:' || id, name FROM groups WHERE id = ANY($2::bigint[])
       UNION ALL SELECT 'user:' || id, email FROM users WHERE id = ANY($3::bigint[])`,
      [ids.projects, ids.groups, ids.users],
    );
    return new Map(rows.map((r) => [r.key, r.label]));
  }
}
