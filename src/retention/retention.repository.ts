import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { effectiveSettings } from '../common/project-settings.js';
import type { DeletedFailures } from '../results/results-observers.js';
import { TEST_CASES_LOCK_CLASS, projectLockKey } from '../results/test-case-guard.js';

/** What a retention policy keeps: either bound, both or neither (null). */
export interface Keep {
  keepDays: number | null;
  keepRuns: number | null;
}

/** A run the policy removes: its id and how many results it holds. */
export interface DoomedRun {
  id: string;
  results: number;
}

/** A run queued for its results' purge (run_purges). */
export interface QueuedPurge {
  runId: string;
  projectId: string;
  /** Whether the project is there and not being deleted (only then are the observers told). */
  projectLive: boolean;
  /** When the run started (null: queued before run_purges kept it). */
  startedAt: Date | null;
}

/**
 * The finished, unpinned runs of project $1 that the policy ($2 keepRuns, $3 keepDays) removes: those beyond the
 * newest keepRuns of them, and those started more than keepDays ago. By ix_runs_project_started.
 */
const DOOMED_SQL = `
  SELECT id, count_attempts FROM (
    SELECT id, started_at, count_attempts, row_number() OVER (ORDER BY started_at DESC, id DESC) AS rank
      FROM runs WHERE project_id = $1 AND status = 'FINISHED' AND NOT pinned
  ) r
   WHERE ($2::int IS NOT NULL AND r.rank > $2::int)
      OR ($3::int IS NOT NULL AND r.started_at < now() - make_interval(days => $3::int))`;

@Injectable()
export class RetentionRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /**
   * A purge batch's transaction. Its statements are bounded (a batch's rows) but some are estimated far above
   * jit_above_cost (the health recount's LATERAL reads by test, ~68 million for a batch of 5,000 tests): PostgreSQL
   * would compile each of them with LLVM: 2.0 s of a batch's 2.1 s on this machine (EXPLAIN ANALYZE), so the
   * retention bench's cleanup went at ~2,000 results/s where a COPY of the rows goes at ~190,000. JIT is off for the
   * transaction.
   * Its commit does not wait for the WAL to reach the disk (synchronous_commit off, for this transaction only): a
   * crash may lose the last batches' commits (at most 3 × wal_writer_delay, 600 ms by default), and a lost batch is
   * only a batch not done: its results, their derived state and the run's place in run_purges come back together, and
   * the purge does it again (a write that saw the batch's effects and committed, waiting for its flush, has flushed
   * the batch's commit with it: the WAL goes to disk in order). A batch's WAL (its deletes, mostly each page's first
   * image after a checkpoint) is as large as the COPY's that wrote the rows; waiting for its flush at each commit held
   * the cleanup on a slow disk, while ingest's own commits wait for theirs as before.
   */
  async transaction<T>(work: (tx: EntityManager) => Promise<T>): Promise<T> {
    const runner = this.db.createQueryRunner();
    await runner.connect();
    try {
      // Begun with its settings in one round trip (a simple query of three statements): the purge shares the
      // replica's event loop with ingest, where each round trip's answer waits its turn behind requests' work.
      await runner.query('BEGIN; SET LOCAL jit = off; SET LOCAL synchronous_commit = off');
      try {
        const result = await work(runner.manager);
        await runner.query('COMMIT');
        return result;
      } catch (error) {
        await runner.query('ROLLBACK').catch(() => undefined);
        throw error;
      }
    } finally {
      await runner.release();
    }
  }

  /** The projects with a retention policy (either bound set), not being deleted. */
  /**
   * V2 messages that waited for their run longer than `ttlSeconds` (pending_ingest), deleted `batch` at a time,
   * oldest first: how many.
   */
  async expirePending(ttlSeconds: number, batch: number): Promise<number> {
    let expired = 0;
    for (;;) {
      const [, deleted]: [unknown[], number] = await this.db.query(
        `DELETE FROM pending_ingest WHERE id IN (
           SELECT id FROM pending_ingest WHERE created_at < now() - make_interval(secs => $1) ORDER BY id LIMIT $2)`,
        [ttlSeconds, batch],
      );
      expired += deleted;
      if (deleted < batch) {
        return expired;
      }
    }
  }

  async projectsWithPolicy(): Promise<{ id: string; keep: Keep }[]> {
    const rows: { id: string; settings: unknown }[] = await this.db.query(
      `SELECT id, settings FROM projects
        WHERE deleting_at IS NULL
          AND (settings #> '{retention,keepDays}' NOT IN ('null'::jsonb) OR settings #> '{retention,keepRuns}' NOT IN ('null'::jsonb))
        ORDER BY id`,
    );
    return rows.map((r) => ({ id: String(r.id), keep: effectiveSettings(r.settings).retention }));
  }

  async policyOf(projectId: string): Promise<Keep> {
    const rows: { settings: unknown }[] = await this.db.query(
      'SELECT settings FROM projects WHERE id = $1 AND deleting_at IS NULL',
      [projectId],
    );
    return effectiveSettings(rows[0]?.settings).retention;
  }

  async doomedRuns(projectId: string, keep: Keep): Promise<DoomedRun[]> {
    if (keep.keepDays === null && keep.keepRuns === null) {
      return [];
    }
    const rows: { id: string; count_attempts: number }[] = await this.db.query(`${DOOMED_SQL} ORDER BY id`, [
      projectId,
      keep.keepRuns,
      keep.keepDays,
    ]);
    return rows.map((r) => ({ id: String(r.id), results: Number(r.count_attempts) }));
  }

  async preview(projectId: string, keep: Keep): Promise<{ runs: number; results: number }> {
    if (keep.keepDays === null && keep.keepRuns === null) {
      return { runs: 0, results: 0 };
    }
    const [row]: { runs: string; results: string | null }[] = await this.db.query(
      `SELECT count(*) AS runs, sum(count_attempts) AS results FROM (${DOOMED_SQL}) d`,
      [projectId, keep.keepRuns, keep.keepDays],
    );
    return { runs: Number(row.runs), results: Number(row.results ?? 0) };
  }

  /**
   * Deletes these runs' rows if they are still finished and unpinned (a run pinned since the policy chose it
   * stays); their delete trigger queues their results for the purge. One short statement however many results.
   */
  async deleteRuns(ids: string[]): Promise<DoomedRun[]> {
    const [rows]: [{ id: string; count_attempts: number }[], number] = await this.db.query(
      `DELETE FROM runs WHERE id = ANY($1::bigint[]) AND status = 'FINISHED' AND NOT pinned RETURNING id, count_attempts`,
      [ids],
    );
    return rows.map((r) => ({ id: String(r.id), results: Number(r.count_attempts) }));
  }

  /** Deletes up to `limit` of the project's runs, whatever they are (the project is being deleted). */
  async deleteRunsOfProject(projectId: string, limit: number): Promise<number> {
    const [, affected]: [unknown, number] = await this.db.query(
      `DELETE FROM runs WHERE id IN (SELECT id FROM runs WHERE project_id = $1 LIMIT $2)`,
      [projectId, limit],
    );
    return affected;
  }

  /** The queued purges, of one project or of all, oldest run first. */
  async queuedPurges(projectId?: string): Promise<QueuedPurge[]> {
    const rows: { run_id: string; project_id: string; live: boolean; started_at: Date | null }[] =
      await this.db.query(
        `SELECT q.run_id, q.project_id, (p.id IS NOT NULL AND p.deleting_at IS NULL) AS live, q.started_at
         FROM run_purges q LEFT JOIN projects p ON p.id = q.project_id
        WHERE $1::bigint IS NULL OR q.project_id = $1::bigint
        ORDER BY q.run_id`,
        [projectId ?? null],
      );
    return rows.map((r) => ({
      runId: String(r.run_id),
      projectId: String(r.project_id),
      projectLive: r.live,
      startedAt: r.started_at,
    }));
  }

  async anythingToPurge(): Promise<boolean> {
    const [row]: { any: boolean }[] = await this.db.query(
      `SELECT EXISTS (SELECT 1 FROM run_purges)
              OR EXISTS (SELECT 1 FROM projects WHERE deleting_at IS NOT NULL OR tests_to_prune) AS any`,
    );
    return row.any;
  }

  /**
   * Deletes up to `limit` results of the run, by its index on (run_id, status, id), and answers how many and of which
   * test cases (distinct, ascending; `failedTestIds`: those of them a failing result of which went), and whether the
   * run has more (one row beyond the batch is looked for: a run's last full batch is not followed by an empty one).
   * The rows are chosen by a bounded index scan and deleted by their tuple ids. The signatures of the failing ones
   * (failure_results, src/triage/) go with them, by that table's key, and are answered by signature and test case
   * (what the recount of signatures takes away, signatures-recount.ts).
   */
  async deleteResultsBatch(
    tx: EntityManager,
    runId: string,
    limit: number,
  ): Promise<{
    deleted: number;
    more: boolean;
    testIds: string[];
    failedTestIds: string[];
    failures: DeletedFailures[];
  }> {
    // Answered as one row of comma-separated lists: 5,000 rows of a test each cost node-postgres ~12 ms of the event
    // loop's time to parse (which the purge shares with ingest), the lists ~1 ms.
    const [row]: {
      deleted: string;
      more: boolean;
      tests: string | null;
      failed: string | null;
      failures: string | null;
    }[] = await tx.query(
      `WITH c AS MATERIALIZED (SELECT ARRAY(SELECT ctid FROM results WHERE run_id = $1 LIMIT $2 + 1) AS ctids),
       d AS (
         DELETE FROM results WHERE ctid = ANY((SELECT c.ctids[1:$2] FROM c)::tid[])
         RETURNING id, test_id, status),
       f AS (
         DELETE FROM failure_results
          WHERE run_id = $1 AND result_id = ANY(ARRAY(SELECT id FROM d WHERE status IN ('FAILED', 'BROKEN')))
         RETURNING result_id, signature_id),
       t AS (SELECT test_id, bool_or(status IN ('FAILED', 'BROKEN')) AS failed FROM d GROUP BY test_id),
       s AS (
         SELECT f.signature_id, d.test_id, count(*) AS n FROM f JOIN d ON d.id = f.result_id
          GROUP BY f.signature_id, d.test_id)
       SELECT (SELECT count(*) FROM d) AS deleted,
              (SELECT cardinality(c.ctids) > $2 FROM c) AS more,
              (SELECT string_agg(t.test_id::text, ',' ORDER BY t.test_id) FROM t) AS tests,
              (SELECT string_agg(t.test_id::text, ',' ORDER BY t.test_id) FROM t WHERE t.failed) AS failed,
              (SELECT string_agg(concat_ws(':', s.signature_id, s.test_id, s.n), ','
                                 ORDER BY s.signature_id, s.test_id) FROM s) AS failures`,
      [runId, limit],
    );
    const list = (text: string | null): string[] => (text ? text.split(',') : []);
    return {
      deleted: Number(row.deleted),
      more: row.more,
      testIds: list(row.tests),
      failedTestIds: list(row.failed),
      failures: list(row.failures).map((entry) => {
        const [signatureId, testId, count] = entry.split(':');
        return { runId, signatureId, testId, count: Number(count) };
      }),
    };
  }

  /** The run's results are gone: it leaves the queue, and its project's test cases are to be pruned. */
  async dequeuePurge(tx: EntityManager, runId: string, projectId: string): Promise<void> {
    await tx.query(
      `WITH dequeued AS (DELETE FROM run_purges WHERE run_id = $1)
       UPDATE projects SET tests_to_prune = true WHERE id = $2 AND NOT tests_to_prune`,
      [runId, projectId],
    );
  }

  /** The projects whose test cases are to be pruned (see dequeuePurge), not being deleted. */
  async projectsToPrune(): Promise<string[]> {
    const rows: { id: string }[] = await this.db.query(
      'SELECT id FROM projects WHERE tests_to_prune AND deleting_at IS NULL ORDER BY id',
    );
    return rows.map((r) => String(r.id));
  }

  /**
   * Deletes up to `limit` of the project's test cases that have no result left, if no writer of the project is in a
   * transaction (see test-case-guard.ts): null when one is, and the deletion waits for the next pass. A deletion is
   * counted in projects.tests_pruned so the writers' caches forget the project's ids.
   */
  async pruneTestCases(projectId: string, limit: number): Promise<number | null> {
    // Bounded by `limit`, estimated above jit_above_cost, and redone if lost: see transaction().
    return this.transaction(async (tx) => {
      const [{ locked }]: { locked: boolean }[] = await tx.query(
        'SELECT pg_try_advisory_xact_lock($1, $2) AS locked',
        [TEST_CASES_LOCK_CLASS, projectLockKey(projectId)],
      );
      if (!locked) {
        return null;
      }
      // Each kind of result by its own index (see OutcomeIndexes1795723200000); results of runs being purged count
      // as results still: their test case goes once they are gone.
      const [, affected]: [unknown, number] = await tx.query(
        `DELETE FROM test_cases WHERE id IN (
           SELECT t.id FROM test_cases t
            WHERE t.project_id = $1
              AND NOT EXISTS (SELECT 1 FROM results r WHERE r.test_id = t.id AND r.outcome)
              AND NOT EXISTS (SELECT 1 FROM results r WHERE r.test_id = t.id AND NOT r.outcome)
            LIMIT $2)`,
        [projectId, limit],
      );
      if (affected > 0) {
        await tx.query('UPDATE projects SET tests_pruned = tests_pruned + 1 WHERE id = $1', [projectId]);
      }
      if (affected < limit) {
        // All done, unless a run of the project is still queued (its purge sets this again as it ends).
        await tx.query('UPDATE projects SET tests_to_prune = false WHERE id = $1 AND tests_to_prune', [
          projectId,
        ]);
      }
      return affected;
    });
  }

  /** The projects being deleted, oldest first. */
  async deletingProjects(): Promise<string[]> {
    const rows: { id: string }[] = await this.db.query(
      'SELECT id FROM projects WHERE deleting_at IS NOT NULL ORDER BY deleting_at, id',
    );
    return rows.map((r) => String(r.id));
  }

  /**
   * Projects whose row is gone but that have test cases still: left by a project's deletion on a replica whose code
   * predates TestCasesWithoutProjectForeignKey1795880000000 (during a rolling upgrade), whose delete of the row no
   * longer cascades to them. Read one project at a time off ix_test_cases_project_order (a loose index scan: one
   * probe a project that has test cases, not a scan of them).
   */
  async projectsGone(): Promise<string[]> {
    const rows: { id: string }[] = await this.db.query(
      `WITH RECURSIVE p(id) AS (
         (SELECT project_id FROM test_cases ORDER BY project_id LIMIT 1)
         UNION ALL
         SELECT (SELECT t.project_id FROM test_cases t WHERE t.project_id > p.id ORDER BY t.project_id LIMIT 1)
           FROM p WHERE p.id IS NOT NULL)
       SELECT id FROM p WHERE id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM projects WHERE projects.id = p.id)`,
    );
    return rows.map((r) => String(r.id));
  }

  /**
   * Deletes up to `limit` test cases of a project being deleted (their results are gone: its runs were purged), or
   * gone (projectsGone).
   */
  async deleteTestCasesOfProject(projectId: string, limit: number): Promise<number> {
    const [, affected]: [unknown, number] = await this.db.query(
      `DELETE FROM test_cases WHERE id IN (SELECT id FROM test_cases WHERE project_id = $1 LIMIT $2)`,
      [projectId, limit],
    );
    return affected;
  }

  /**
   * The row of a project being deleted, last: what is left (members, settings, a few rows) goes by cascade; then, in
   * the same transaction and once the row is gone, the test cases a writer committed since deleteTestCasesOfProject
   * (test_cases has no foreign key to projects: TestCasesWithoutProjectForeignKey1795880000000). The row's delete
   * waits for any transaction that still holds a run of the project (an import creates its run in its own
   * transaction), so what such a writer stored is seen by the statement after it; a writer that comes later finds
   * its run gone and stores nothing.
   */
  async deleteProjectRow(projectId: string): Promise<void> {
    await this.db.transaction(async (tx) => {
      await tx.query('DELETE FROM projects WHERE id = $1 AND deleting_at IS NOT NULL', [projectId]);
      await tx.query(
        'DELETE FROM test_cases WHERE project_id = $1 AND NOT EXISTS (SELECT 1 FROM projects WHERE id = $1)',
        [projectId],
      );
    });
  }
}
