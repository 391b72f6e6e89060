import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import type { NotificationType } from './notification.events.js';

/** An event a committed change owes (pending_notifications): what it is about, not yet its payload. */
export interface PendingEvent {
  id: string;
  projectId: string;
  type: Exclude<NotificationType, 'ping'>;
  key: string;
  runId: string | null;
  testId: string | null;
  /** What only the change knew (a run.failed's gate as it was evaluated); the rest is read when it is announced. */
  data: Record<string, unknown> | null;
}

/** Which owed events an announcement takes: a run's, a test's, or one (the sweep's). */
export type PendingScope = { runId: string } | { testId: string } | { id: string };

const COLUMNS = `id::text AS "id", project_id::text AS "projectId", type, event_key AS "key", run_id::text AS "runId",
  test_id::text AS "testId", data`;

/**
 * The events changes owe their subscribers, written in the change's transaction and turned into deliveries and mail
 * right after it (see NotificationOutbox.owe and announce).
 */
@Injectable()
export class PendingRepository {
  constructor(private readonly db: DataSource) {}

  /** One row, in the caller's transaction; nothing when an event with this key is owed already. */
  async owe(tx: EntityManager, e: Omit<PendingEvent, 'id'>): Promise<void> {
    await tx.query(
      `INSERT INTO pending_notifications (project_id, type, event_key, run_id, test_id, data)
       VALUES ($1, $2, $3, $4, $5, $6::jsonb)
       ON CONFLICT (project_id, event_key) DO NOTHING`,
      [e.projectId, e.type, e.key, e.runId, e.testId, e.data === null ? null : JSON.stringify(e.data)],
    );
  }

  /**
   * The owed events in `scope`, locked for the caller's transaction; those another transaction holds are passed
   * over (SKIP LOCKED: another replica announcing them, or the sweep), unless `wait`. A run's finish announces with
   * `wait`: a second finish of the run on another replica may have claimed its row and, the gate not stored yet,
   * leave it owed; passing over it there left it to the sweep, a minute or two later. The wait is bounded (5 s):
   * what holds the row longer is the sweep, which announces it. The bound is this statement's only: what the
   * announcement writes after it waits as any write does.
   */
  async claim(tx: EntityManager, scope: PendingScope, wait: boolean): Promise<PendingEvent[]> {
    const [column, value] =
      'runId' in scope
        ? ['run_id', scope.runId]
        : 'testId' in scope
          ? ['test_id', scope.testId]
          : ['id', scope.id];
    if (wait) {
      await tx.query(`SET LOCAL lock_timeout = '5s'`);
    }
    const claimed: PendingEvent[] = await tx.query(
      `SELECT ${COLUMNS} FROM pending_notifications WHERE ${column} = $1 ORDER BY id FOR UPDATE${wait ? '' : ' SKIP LOCKED'}`,
      [value],
    );
    if (wait) {
      await tx.query('SET LOCAL lock_timeout TO DEFAULT');
    }
    return claimed;
  }

  /** The ids of owed events past the grace period that no transaction holds now (the sweep's list). */
  async due(olderThanMs: number, limit: number, except: readonly string[]): Promise<string[]> {
    const rows: { id: string }[] = await this.db.query(
      `SELECT id::text AS id FROM pending_notifications
        WHERE created_at < now() - ($1::double precision * interval '1 millisecond') AND id <> ALL($3::bigint[])
        ORDER BY id LIMIT $2 FOR UPDATE SKIP LOCKED`,
      [olderThanMs, limit, except],
    );
    return rows.map((r) => r.id);
  }

  async remove(tx: EntityManager, ids: readonly string[]): Promise<void> {
    if (ids.length) {
      await tx.query(`DELETE FROM pending_notifications WHERE id = ANY($1::bigint[])`, [ids]);
    }
  }

  transaction<T>(work: (tx: EntityManager) => Promise<T>): Promise<T> {
    return this.db.transaction(work);
  }
}
