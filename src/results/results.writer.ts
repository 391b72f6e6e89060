import { createHash } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { ResultInput, RunCounts } from './result-input.js';

export interface RunRef {
  id: string;
  projectId: string;
}

export interface WriteOutcome {
  /** Ids of the stored results in input order; null where a result with that UUID already existed. */
  ids: (string | null)[];
  /** The run's counts after this batch. */
  counts: RunCounts;
}

/** The stable identity of a test: its explicit id when the client sends one, else suite + name. */
export function testIdentity(r: Pick<ResultInput, 'testId' | 'suite' | 'name'>): string {
  const key = r.testId ? `id\u0000${r.testId}` : `sn\u0000${r.suite ?? ''}\u0000${r.name}`;
  return createHash('md5').update(key).digest('hex');
}

/**
 * The one write path of every ingest surface (V1, V2, Import): a batch of results becomes one statement
 * for the test cases (upsert by identity), one for the results (multi-row INSERT from arrays, idempotent
 * by UUID) and one atomic increment of the run's counts, inside the caller's transaction.
 */
@Injectable()
export class ResultsWriter {
  async write(tx: EntityManager, run: RunRef, items: ResultInput[]): Promise<WriteOutcome> {
    if (!items.length) {
      return { ids: [], counts: await this.counts(tx, run.id) };
    }
    const identities = items.map(testIdentity);
    const testIds = await this.upsertTestCases(tx, run, items, identities);

    const cols = {
      test: identities.map((i) => testIds.get(i)!),
      uuid: items.map((r) => r.uuid ?? null),
      name: items.map((r) => r.name),
      suite: items.map((r) => r.suite ?? ''),
      status: items.map((r) => r.status),
      duration: items.map((r) => (r.durationMs === undefined ? null : Math.round(r.durationMs))),
      message: items.map((r) => r.message ?? null),
      trace: items.map((r) => r.trace ?? null),
      started: items.map((r) => r.startedAt?.toISOString() ?? null),
      attributes: items.map((r) => JSON.stringify(r.attributes ?? {})),
      retry: items.map((r) => r.retry ?? 0),
      ord: items.map((_, i) => i),
    };
    const inserted: { id: string; uuid: string | null }[] = await tx.query(
      `INSERT INTO results (run_id, project_id, test_id, uuid, name, suite, status, duration_ms, message, trace,
                            started_at, attributes, retry)
       SELECT $1, $2, test_id, uuid, name, suite, status, duration_ms, message, trace, started_at, attributes, retry
         FROM unnest($3::bigint[], $4::uuid[], $5::varchar[], $6::varchar[], $7::varchar[], $8::bigint[],
                     $9::text[], $10::text[], $11::timestamptz[], $12::jsonb[], $13::int[], $14::int[])
              AS t(test_id, uuid, name, suite, status, duration_ms, message, trace, started_at, attributes, retry, ord)
        ORDER BY ord
       ON CONFLICT (project_id, uuid) DO NOTHING
       RETURNING id, uuid`,
      [run.id, run.projectId, cols.test, cols.uuid, cols.name, cols.suite, cols.status, cols.duration, cols.message,
        cols.trace, cols.started, cols.attributes, cols.retry, cols.ord],
    );
    // Identity values rise in insertion order, which follows `ord`: the stored rows, by id, are the stored
    // inputs in input order. An input is stored unless its UUID existed already (or came earlier in the batch).
    const storedUuids = new Set(inserted.map((r) => r.uuid).filter(Boolean));
    const sortedIds = inserted.map((r) => String(r.id)).sort((a, b) => (BigInt(a) < BigInt(b) ? -1 : 1));
    const ids: (string | null)[] = [];
    let next = 0;
    for (const item of items) {
      const uuid = item.uuid?.toLowerCase();
      const stored = !uuid || storedUuids.delete(uuid);
      ids.push(stored ? sortedIds[next++] : null);
    }
    const stored = ids.flatMap((id, i) => (id ? [items[i].status] : []));
    return { ids, counts: await this.addCounts(tx, run.id, stored) };
  }

  private async upsertTestCases(
    tx: EntityManager,
    run: RunRef,
    items: ResultInput[],
    identities: string[],
  ): Promise<Map<string, string>> {
    // One row per identity (the last result of a test in the batch decides its last status).
    const latest = new Map<string, ResultInput>();
    items.forEach((item, i) => latest.set(identities[i], item));
    const keys = [...latest.keys()].sort();
    const rows: { id: string; identity: string }[] = await tx.query(
      `INSERT INTO test_cases (project_id, identity, external_id, suite, name, last_status, last_run_id)
       SELECT $1, identity, external_id, suite, name, status, $2
         FROM unnest($3::char(32)[], $4::varchar[], $5::varchar[], $6::varchar[], $7::varchar[])
              AS t(identity, external_id, suite, name, status)
       ON CONFLICT (project_id, identity) DO UPDATE
         SET last_status = EXCLUDED.last_status, last_run_id = EXCLUDED.last_run_id,
             suite = EXCLUDED.suite, name = EXCLUDED.name
       RETURNING id, identity`,
      [
        run.projectId,
        run.id,
        keys,
        keys.map((k) => latest.get(k)!.testId ?? null),
        keys.map((k) => latest.get(k)!.suite ?? ''),
        keys.map((k) => latest.get(k)!.name),
        keys.map((k) => latest.get(k)!.status),
      ],
    );
    return new Map(rows.map((r) => [r.identity, String(r.id)]));
  }

  private async addCounts(tx: EntityManager, runId: string, statuses: string[]): Promise<RunCounts> {
    const n = (s: string) => statuses.filter((x) => x === s).length;
    // TypeORM answers UPDATE … RETURNING with [rows, affected].
    const [updated]: [Record<string, number>[], number] = await tx.query(
      `UPDATE runs SET count_total = count_total + $2, count_passed = count_passed + $3, count_failed = count_failed + $4,
                       count_broken = count_broken + $5, count_skipped = count_skipped + $6
        WHERE id = $1
        RETURNING ${COUNT_COLUMNS}`,
      [runId, statuses.length, n('PASSED'), n('FAILED'), n('BROKEN'), n('SKIPPED')],
    );
    return toCounts(updated[0]);
  }

  private async counts(tx: EntityManager, runId: string): Promise<RunCounts> {
    const rows: Record<string, number>[] = await tx.query(`SELECT ${COUNT_COLUMNS} FROM runs WHERE id = $1`, [runId]);
    return toCounts(rows[0]);
  }
}

const COUNT_COLUMNS = 'count_total, count_passed, count_failed, count_broken, count_skipped';

function toCounts(row: Record<string, number>): RunCounts {
  return {
    total: row.count_total,
    passed: row.count_passed,
    failed: row.count_failed,
    broken: row.count_broken,
    skipped: row.count_skipped,
  };
}
