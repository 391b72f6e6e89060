import { DataSource } from 'typeorm';
import { dataSourceOptions } from '../../../src/database/data-source-options.js';
import { RetentionRepository } from '../../../src/retention/retention.repository.js';
import { createTestDatabase, TestDatabase } from '../../support/database.js';

/**
 * A purge batch (RetentionRepository.deleteResultsBatch) answers whether the run has results left, so that a run's
 * last full batch is not followed by an empty transaction; the queue keeps when each deleted run started; a batch's
 * transaction has settings of its own.
 */
describe('the purge of a deleted run, batch by batch', () => {
  let database: TestDatabase;
  let db: DataSource;
  let repo: RetentionRepository;
  let projectId: string;

  beforeAll(async () => {
    database = await createTestDatabase();
    db = await new DataSource(dataSourceOptions(database.url, 2)).initialize();
    repo = new RetentionRepository(db);
    const [{ id }] = await db.query(`INSERT INTO projects (key, name) VALUES ('PB', 'purge') RETURNING id`);
    projectId = String(id);
  });
  afterAll(async () => {
    await db.destroy();
    await database.drop();
  });

  /** A finished run of `results` results (a test each, every third failing), deleted: queued for its purge. */
  async function deletedRun(results: number): Promise<{ runId: string; startedAt: Date }> {
    const [run] = await db.query(
      `INSERT INTO runs (project_id, name, status, started_at)
       VALUES ($1, 'nightly', 'FINISHED', timestamptz '2026-03-01 10:00:00.123456+00') RETURNING id, started_at`,
      [projectId],
    );
    await db.query(
      `INSERT INTO results (run_id, project_id, test_id, name, status)
       SELECT $1, $2, 1000 + i, 'case ' || i, CASE WHEN i % 3 = 0 THEN 'FAILED' ELSE 'PASSED' END
         FROM generate_series(1, $3::int) i`,
      [run.id, projectId, results],
    );
    expect(await repo.deleteRuns([String(run.id)])).toEqual([{ id: String(run.id), results: 0 }]);
    return { runId: String(run.id), startedAt: run.started_at };
  }

  const batches = async (runId: string, limit: number) => {
    const seen: { deleted: number; more: boolean; failed: number }[] = [];
    for (let more = true; more;) {
      const batch = await repo.transaction((tx) => repo.deleteResultsBatch(tx, runId, limit));
      seen.push({ deleted: batch.deleted, more: batch.more, failed: batch.failedTestIds.length });
      more = batch.more;
      expect(seen.length).toBeLessThan(10);
    }
    return seen;
  };

  it('queues the run with its start', async () => {
    const { runId, startedAt } = await deletedRun(3);
    const queued = (await repo.queuedPurges(projectId)).find((q) => q.runId === runId);
    expect(queued).toEqual({ runId, projectId, projectLive: true, startedAt });
    expect(startedAt.toISOString()).toBe('2026-03-01T10:00:00.123Z');
  });

  it('says a run has more while it has, and ends with its last full batch', async () => {
    const five = await deletedRun(5);
    expect(await batches(five.runId, 2)).toEqual([
      { deleted: 2, more: true, failed: expect.any(Number) },
      { deleted: 2, more: true, failed: expect.any(Number) },
      { deleted: 1, more: false, failed: expect.any(Number) },
    ]);
    const four = await deletedRun(4);
    const seen = await batches(four.runId, 2);
    expect(seen.map(({ deleted, more }) => ({ deleted, more }))).toEqual([
      { deleted: 2, more: true },
      { deleted: 2, more: false },
    ]);
    // The failing results (every third: one of the four) are told as failing, once.
    expect(seen.reduce((sum, b) => sum + b.failed, 0)).toBe(1);
    const [{ left }] = await db.query(
      'SELECT count(*)::int AS left FROM results WHERE run_id = ANY($1::bigint[])',
      [[five.runId, four.runId]],
    );
    expect(left).toBe(0);
  });

  it("runs a batch without JIT and without waiting for its commit's flush, and for that transaction only", async () => {
    const settings = async (on: Pick<DataSource, 'query'>) =>
      (
        await on.query(`SELECT current_setting('jit') AS jit, current_setting('synchronous_commit') AS sync`)
      )[0];
    expect(await repo.transaction((tx) => settings(tx))).toEqual({ jit: 'off', sync: 'off' });
    const outside = await settings(db);
    expect(outside.sync).toBe('on');
    await db.transaction(async (tx) => expect((await settings(tx)).sync).toBe('on'));
  });

  it('rolls a failed batch back whole, and leaves its connection out of any transaction', async () => {
    const { runId } = await deletedRun(3);
    await expect(
      repo.transaction(async (tx) => {
        await repo.deleteResultsBatch(tx, runId, 2);
        await repo.dequeuePurge(tx, runId, projectId);
        throw new Error('the observers failed');
      }),
    ).rejects.toThrow('the observers failed');
    const [{ left }] = await db.query('SELECT count(*)::int AS left FROM results WHERE run_id = $1', [runId]);
    expect(left).toBe(3);
    expect((await repo.queuedPurges(projectId)).map((q) => q.runId)).toContain(runId);
    // The pool has two connections: both are out of a transaction, with the settings of their own.
    const states = await Promise.all(
      [0, 1].map(() =>
        db.query(
          `SELECT now() = statement_timestamp() AS fresh, current_setting('synchronous_commit') AS sync`,
        ),
      ),
    );
    expect(states.map(([s]) => s)).toEqual([
      { fresh: true, sync: 'on' },
      { fresh: true, sync: 'on' },
    ]);
    expect(await batches(runId, 2)).toEqual([
      { deleted: 2, more: true, failed: 1 },
      { deleted: 1, more: false, failed: 0 },
    ]);
  });

  it('answers the failing results deleted by signature and test, and deletes their failure_results', async () => {
    const { runId } = await deletedRun(6);
    const [signature] = await db.query(
      `INSERT INTO failure_signatures
              (project_id, key, sample_message, first_run_id, first_seen_at, last_run_id, last_seen_at, occurrences)
       VALUES ($1, 'k', 'boom', $2, now(), $2, now(), 2) RETURNING id`,
      [projectId, runId],
    );
    await db.query(
      `INSERT INTO failure_results (run_id, result_id, signature_id)
       SELECT run_id, id, $2 FROM results WHERE run_id = $1 AND status = 'FAILED'`,
      [runId, signature.id],
    );
    const tests: { test_id: string }[] = await db.query(
      `SELECT test_id FROM results WHERE run_id = $1 AND status = 'FAILED' ORDER BY test_id`,
      [runId],
    );
    const batch = await repo.transaction((tx) => repo.deleteResultsBatch(tx, runId, 10));
    expect(batch).toEqual({
      deleted: 6,
      more: false,
      testIds: expect.any(Array),
      failedTestIds: tests.map((t) => String(t.test_id)),
      failures: tests.map((t) => ({
        runId,
        signatureId: String(signature.id),
        testId: String(t.test_id),
        count: 1,
      })),
    });
    expect(batch.testIds).toHaveLength(6);
    const [{ left }] = await db.query('SELECT count(*)::int AS left FROM failure_results WHERE run_id = $1', [
      runId,
    ]);
    expect(left).toBe(0);
  });

  it('answers nothing more for a run without results', async () => {
    const none = await deletedRun(0);
    expect(await batches(none.runId, 2)).toEqual([{ deleted: 0, more: false, failed: 0 }]);
  });
});
