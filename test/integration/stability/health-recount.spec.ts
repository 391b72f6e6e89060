import { DataSource } from 'typeorm';
import { dataSourceOptions } from '../../../src/database/data-source-options.js';
import { RetentionRepository } from '../../../src/retention/retention.repository.js';
import { recountHealth } from '../../../src/stability/health-recount.js';
import { createTestDatabase, TestDatabase } from '../../support/database.js';

type Status = 'PASSED' | 'FAILED' | 'SKIPPED';

interface HealthRow {
  name: string;
  runs: number;
  flake_rate: number | null;
  last_status: string | null;
  last_run_id: string | null;
  last_failed_at: Date | null;
  state: string;
}

/** A flake rate the recount never gives with a window of 2 (flips / (runs - 1): 0 or 1): a row it did not write. */
const UNTOUCHED = 0.77;

/**
 * The health recount after a purge batch (health-recount.ts): only the tests whose kept health the deleted run is
 * part of are recounted (its window holds the run, its last run is the run, or its last failure was in it), and what
 * it leaves is what a recount of every test gives.
 */
describe('test health recounted after a purge batch', () => {
  let database: TestDatabase;
  let db: DataSource;
  let repo: RetentionRepository;

  beforeAll(async () => {
    database = await createTestDatabase();
    db = await new DataSource(dataSourceOptions(database.url, 2)).initialize();
    repo = new RetentionRepository(db);
  });
  afterAll(async () => {
    await db.destroy();
    await database.drop();
  });

  /**
   * A project with flaky.window 2, its runs (finished, an hour apart, oldest first) and its tests' results by run;
   * each test's health as a recount of everything leaves it.
   */
  async function project(key: string, runs: number, tests: Record<string, (Status | null)[]>) {
    const [{ id }] = await db.query(
      `INSERT INTO projects (key, name, settings) VALUES ($1, $1, '{"flaky": {"window": 2, "minRuns": 2}}')
       RETURNING id`,
      [key],
    );
    const projectId = String(id);
    const runIds: string[] = [];
    for (let r = 0; r < runs; r++) {
      const [run] = await db.query(
        `INSERT INTO runs (project_id, name, status, started_at)
         VALUES ($1, 'nightly', 'FINISHED', timestamptz '2026-01-01' + make_interval(hours => $2)) RETURNING id`,
        [projectId, r],
      );
      runIds.push(String(run.id));
    }
    const testIds = new Map<string, string>();
    for (const [name, statuses] of Object.entries(tests)) {
      const [test] = await db.query(
        `INSERT INTO test_cases (project_id, identity, name) VALUES ($1::bigint, md5($1::text || $2)::uuid, $2) RETURNING id`,
        [projectId, name],
      );
      testIds.set(name, String(test.id));
      await db.query('INSERT INTO test_health (test_id, project_id) VALUES ($1, $2)', [test.id, projectId]);
      for (const [r, status] of statuses.entries()) {
        if (status) {
          await db.query(
            `INSERT INTO results (run_id, project_id, test_id, name, status) VALUES ($1, $2, $3, $4, $5)`,
            [runIds[r], projectId, test.id, name, status],
          );
        }
      }
    }
    const all = [...testIds.values()].sort((a, b) => Number(a) - Number(b));
    const everything = { runIds: [], failedTestIds: all, startedAt: null };
    await db.transaction((tx) => recountHealth(tx, projectId, all, everything));
    return { projectId, runIds, testIds, all, everything };
  }

  const health = async (projectId: string): Promise<Record<string, HealthRow>> => {
    const rows: HealthRow[] = await db.query(
      `SELECT t.name, h.runs, h.flake_rate, h.last_status, h.last_run_id, h.last_failed_at, h.state
         FROM test_health h JOIN test_cases t ON t.id = h.test_id WHERE h.project_id = $1`,
      [projectId],
    );
    return Object.fromEntries(rows.map((r) => [r.name, r]));
  };

  /** The oldest run goes as retention removes it: its row, then its results in one purge batch, recounted. */
  async function purgeOldest(projectId: string, runId: string, startedAt?: null): Promise<void> {
    await db.query('UPDATE test_health SET flake_rate = $2 WHERE project_id = $1', [projectId, UNTOUCHED]);
    await repo.deleteRuns([runId]);
    if (startedAt === null) {
      await db.query('UPDATE run_purges SET started_at = NULL WHERE run_id = $1', [runId]);
    }
    const [queued] = await repo.queuedPurges(projectId);
    expect(queued.runId).toBe(runId);
    await repo.transaction(async (tx) => {
      const { testIds, failedTestIds } = await repo.deleteResultsBatch(tx, runId, 1000);
      await recountHealth(tx, projectId, testIds, {
        runIds: [runId],
        failedTestIds,
        startedAt: queued.startedAt,
      });
      await repo.dequeuePurge(tx, runId, projectId);
    });
  }

  // Oldest run first. With a window of 2, the first run is outside the window of a test that ran in the two after.
  const TESTS: Record<string, (Status | null)[]> = {
    steady: ['PASSED', 'PASSED', 'PASSED', 'PASSED'],
    failedOnlyFirst: ['FAILED', 'PASSED', 'PASSED', 'PASSED'],
    failedSinceToo: ['FAILED', 'PASSED', 'FAILED', 'PASSED'],
    sparse: ['PASSED', null, null, 'PASSED'],
    skippedOnlyFirst: ['SKIPPED', null, null, null],
  };

  it('recounts only the tests whose window, last run or last failure held the deleted run', async () => {
    const { projectId, runIds } = await project('HRSCOPE', 4, TESTS);
    const [{ started_at }] = await db.query('SELECT started_at FROM runs WHERE id = $1', [runIds[0]]);
    const before = await health(projectId);
    expect(before.failedOnlyFirst.last_failed_at).toEqual(started_at);
    expect(before.sparse).toMatchObject({ runs: 2, flake_rate: 0 });
    expect(before.skippedOnlyFirst).toMatchObject({ last_run_id: runIds[0], last_status: 'SKIPPED' });

    await purgeOldest(projectId, runIds[0]);

    const after = await health(projectId);
    // Not recounted: the run had left their windows, and their last failure (if any) was later.
    expect(after.steady).toMatchObject({ flake_rate: UNTOUCHED, runs: 2, state: 'HEALTHY' });
    expect(after.failedSinceToo).toMatchObject({ flake_rate: UNTOUCHED, runs: 2, last_status: 'PASSED' });
    expect(after.failedSinceToo.last_failed_at).toEqual(before.failedSinceToo.last_failed_at);
    // Recounted: the run held its last failure (now none), was in its window, or was its last run.
    expect(after.failedOnlyFirst).toMatchObject({
      flake_rate: 0,
      runs: 2,
      last_failed_at: null,
      state: 'HEALTHY',
    });
    // A test that has not run twice stores a flake rate of 0 (read as none: migration TestHealthSecondRunHot).
    expect(after.sparse).toMatchObject({ flake_rate: 0, runs: 1, last_run_id: runIds[3] });
    expect(after.skippedOnlyFirst).toMatchObject({ last_run_id: null, last_status: null, runs: 0 });
  });

  it('leaves every test as a recount of all of them does', async () => {
    const { projectId, runIds, all, everything } = await project('HRSAME', 4, TESTS);
    await purgeOldest(projectId, runIds[0]);
    const scoped = await health(projectId);
    await db.transaction((tx) => recountHealth(tx, projectId, all, everything));
    const full = await health(projectId);
    for (const name of Object.keys(TESTS)) {
      const { flake_rate, ...rest } = scoped[name];
      const { flake_rate: fullRate, ...fullRest } = full[name];
      expect(rest).toEqual(fullRest);
      expect([fullRate, UNTOUCHED]).toContainEqual(flake_rate);
    }
  });

  it('recounts every test that failed in the run when the run queued before its start was kept', async () => {
    const { projectId, runIds } = await project('HRLEGACY', 4, TESTS);
    await purgeOldest(projectId, runIds[0], null);
    const after = await health(projectId);
    expect(after.failedSinceToo).toMatchObject({ flake_rate: 1, runs: 2 });
    expect(after.steady.flake_rate).toBe(UNTOUCHED);
  });
});
