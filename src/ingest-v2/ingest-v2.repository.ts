import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import type { IngestMessage } from '../infra/queue/ingest-queue.js';
import { storeNewFailures } from '../insights/changes.js';
import { RunEntity } from '../results/entities.js';

export interface PendingRow {
  id: string;
  kind: 'results' | 'finish';
  payload: IngestMessage;
}

@Injectable()
export class IngestV2Repository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  transaction<T>(work: (tx: EntityManager) => Promise<T>): Promise<T> {
    return this.db.transaction(work);
  }

  /**
   * Locks the runs a batch touches for the rest of the transaction, so that a run and its results handled at
   * the same moment by two consumers cannot miss each other, and a finish is not overtaken by results queued
   * before it: creating or finishing a run takes its key exclusively, adding results shares it (batches of
   * results for one run still run side by side; their counts are atomic increments). One statement, keys in a fixed order, which rules out deadlocks between batches.
   */
  async lockRuns(tx: EntityManager, locks: { key: string; exclusive: boolean }[]): Promise<void> {
    const byKey = new Map<string, boolean>();
    for (const { key, exclusive } of locks) {
      byKey.set(key, exclusive || (byKey.get(key) ?? false));
    }
    const keys = [...byKey.keys()].sort();
    await tx.query(
      `SELECT count(CASE WHEN l.exclusive THEN pg_advisory_xact_lock(hashtextextended(l.key, 7))
                         ELSE pg_advisory_xact_lock_shared(hashtextextended(l.key, 7)) END)
         FROM unnest($1::text[], $2::boolean[]) WITH ORDINALITY AS l(key, exclusive, n)`,
      [keys, keys.map((k) => byKey.get(k)!)],
    );
  }

  findRun(tx: EntityManager | undefined, projectId: string, uuid: string): Promise<RunEntity | null> {
    return (tx ?? this.db.manager).getRepository(RunEntity).findOneBy({ projectId, uuid });
  }

  /** Creates the run once; a second message with the same UUID changes nothing. */
  async insertRun(
    tx: EntityManager,
    run: {
      projectId: string;
      uuid: string;
      name: string;
      startedAt: Date;
      attributes: Record<string, string>;
      /** null: the default rule's (tr_runs_default_stream, with the project's settings). */
      stream: string | null;
    },
  ): Promise<RunEntity | null> {
    const rows: { id: string }[] = await tx.query(
      `INSERT INTO runs (project_id, uuid, name, started_at, attributes, stream) VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (project_id, uuid) DO NOTHING RETURNING id`,
      [run.projectId, run.uuid, run.name, run.startedAt, JSON.stringify(run.attributes), run.stream],
    );
    return rows.length ? tx.getRepository(RunEntity).findOneBy({ id: String(rows[0].id) }) : null;
  }

  async keepPending(tx: EntityManager, message: IngestMessage & { runUuid: string }): Promise<void> {
    await tx.query(
      'INSERT INTO pending_ingest (project_id, run_uuid, kind, payload) VALUES ($1, $2, $3, $4)',
      [message.projectId, message.runUuid, message.kind, JSON.stringify(message)],
    );
  }

  async takePending(tx: EntityManager, projectId: string, runUuid: string): Promise<PendingRow[]> {
    const [rows]: [PendingRow[], number] = await tx.query(
      `DELETE FROM pending_ingest WHERE project_id = $1 AND run_uuid = $2 RETURNING id, kind, payload`,
      [projectId, runUuid],
    );
    return rows.sort((a, b) => Number(a.id) - Number(b.id));
  }

  /** Finishes the run once, with its new failures (a second finish message changes nothing): whether this one did. */
  async finish(tx: EntityManager, runId: string, finishedAt: Date): Promise<boolean> {
    const [rows]: [{ id: string }[], number] = await tx.query(
      `UPDATE runs SET status = 'FINISHED', finished_at = GREATEST($2::timestamptz, started_at)
        WHERE id = $1 AND status <> 'FINISHED' RETURNING id`,
      [runId, finishedAt],
    );
    if (rows.length) {
      await storeNewFailures(tx, runId);
    }
    return rows.length > 0;
  }
}
