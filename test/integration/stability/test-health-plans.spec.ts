import { DataSource, type EntityManager } from 'typeorm';
import { dataSourceOptions } from '../../../src/database/data-source-options.js';
import { RunsRepository } from '../../../src/results/runs.repository.js';
import { type TestHealth, newHealth } from '../../../src/stability/flakiness.js';
import {
  OUTCOME,
  type RunEntry,
  TestHealthRepository,
  entryParts,
  outcomeCode,
} from '../../../src/stability/test-health.repository.js';
import { createTestDatabase, TestDatabase } from '../../support/database.js';

/**
 * The plan of every node in an EXPLAIN (FORMAT JSON) answer, flattened; without the read's CTEs `f`, `sk` and `pp`
 * (the repeats: plain failures of tests failing steadily, skips of tests that never ran, plain passes of tests that
 * have run once, applied by their place).
 */
function nodes(plan: { Plans?: unknown[] } & Record<string, unknown>): Record<string, unknown>[] {
  if (['CTE f', 'CTE sk'].includes(String(plan['Subplan Name']))) {
    return [];
  }
  return [plan, ...((plan.Plans ?? []) as (typeof plan)[]).flatMap(nodes)];
}

/** Every node of a plan, flattened. */
function everyNode(plan: Record<string, unknown>): Record<string, unknown>[] {
  return [plan, ...((plan.Plans ?? []) as Record<string, unknown>[]).flatMap(everyNode)];
}

/** How the read's CTEs `f` and `sk` (its repeats) find their rows of test_health: the node types. */
function repeatScans(plan: Record<string, unknown>): unknown[] {
  const inRepeats = (n: Record<string, unknown>): Record<string, unknown>[] =>
    ['CTE f', 'CTE sk'].includes(String(n['Subplan Name']))
      ? everyNode(n)
      : ((n.Plans ?? []) as Record<string, unknown>[]).flatMap(inRepeats);
  return inRepeats(plan)
    .filter((n) => n['Relation Name'] === 'test_health' && n['Node Type'] !== 'ModifyTable')
    .map((n) => n['Node Type']);
}

/**
 * How PostgreSQL runs the results writer's statements on test health over an installation's worth of it: a batch's
 * tests are found by index probes, whatever the number of rows of every project in test_health. Planned with the
 * service's own connection settings (data-source-options.ts), on real statistics.
 */
/** The run's entry for `read` (run 9, no stream, no commit; a window of 30). */
const ENTRY: RunEntry = { ...entryParts('9', '0', '0'), window: 30 };

describe('test health statements, planned on a big table', () => {
  let database: TestDatabase;
  let db: DataSource;
  const TESTS = 40_000;

  beforeAll(async () => {
    database = await createTestDatabase();
    db = await new DataSource(dataSourceOptions(database.url, 2)).initialize();
    // Two other projects' tests (test_health has no foreign key: rows alone are enough for the planner).
    await db.query(
      `INSERT INTO test_health (test_id, project_id, win, runs, last_status, last_run_id, state, last_failed_at)
       SELECT i, 1001 + i / 20000, decode(repeat('00112233445566778899aabbccddee', 3), 'hex'), 3, 'PASSED', 5, 'HEALTHY',
              CASE WHEN i % 10 = 3 THEN now() END
         FROM generate_series(1, $1::int) i`,
      [TESTS],
    );
    await db.query('VACUUM ANALYZE test_health');
  }, 120_000);
  afterAll(async () => {
    await db?.destroy();
    await database?.drop();
  });

  /** `read` of run 9 in a transaction of its own, with the statements it sent. */
  async function readSent(repository: TestHealthRepository, ids: string[], codes: number[]) {
    const sent: { sql: string; params: unknown[] }[] = [];
    const read = await db.transaction((tx) =>
      repository.read(
        {
          query: (sql: string, params: unknown[]) => {
            sent.push({ sql, params });
            return tx.query(sql, params);
          },
        } as Pick<EntityManager, 'query'>,
        ids,
        codes,
        '9',
        new Date(),
        ENTRY,
      ),
    );
    return { read, sent };
  }

  it("stores a batch's health through index probes, not a hash of the whole table", async () => {
    const repository = new TestHealthRepository(db);
    // 650 failing tests of one project, as an import's finish stores them a slice at a time.
    const ids = Array.from({ length: 650 }, (_, i) => String(20_003 + i * 10));
    const versions: { test_id: string; v: string }[] = await db.query(
      'SELECT test_id, xmin::text AS v FROM test_health WHERE test_id = ANY($1::bigint[])',
      [ids],
    );
    const health: TestHealth = {
      ...newHealth(new Date()),
      entries: [{ run: '9', bits: 0x22, stream: '0', commit: '0' }],
      runs: 1,
      lastStatus: 'FAILED',
      lastRunId: '9',
      lastFailedAt: new Date(),
      state: 'FAILING',
    };
    // The statement as the repository sends it, caught on its way and explained instead.
    const sent: { sql: string; params: unknown[] }[] = [];
    const recorder = {
      query: (sql: string, params: unknown[]) => {
        sent.push({ sql, params });
        return Promise.resolve([[], 0]);
      },
    } as unknown as Pick<EntityManager, 'query'>;
    await repository.update(
      recorder,
      ids.map((testId) => ({ testId, health, before: health })),
      new Map(versions.map((r) => [String(r.test_id), r.v])),
    );
    expect(sent).toHaveLength(1);
    const [
      {
        'QUERY PLAN': [plan],
      },
    ]: { 'QUERY PLAN': [{ Plan: Record<string, unknown> }] }[] = await db.transaction((tx) =>
      tx.query(`EXPLAIN (FORMAT JSON) ${sent[0].sql}`, sent[0].params),
    );
    const all = nodes(plan.Plan);
    const onTable = all.filter(
      (n) => n['Relation Name'] === 'test_health' && n['Node Type'] !== 'ModifyTable',
    );
    expect(onTable.map((n) => [n['Node Type'], n['Index Name']])).toEqual([
      ['Index Scan', 'test_health_pkey'],
    ]);
    expect(all.some((n) => n['Node Type'] === 'Hash')).toBe(false);
  });

  it('reads a batch of close ids as one range of the primary key, not a scan of the whole table', async () => {
    const repository = new TestHealthRepository(db);
    // A V1 batch: 1,000 tests of one project, created together (ids close), every outcome a plain pass.
    const ids = Array.from({ length: 1000 }, (_, i) => String(25_001 + i));
    const { sent } = await readSent(
      repository,
      ids,
      ids.map(() => OUTCOME.PLAIN_PASS),
    );
    expect(sent).toHaveLength(1);
    const [
      {
        'QUERY PLAN': [plan],
      },
    ]: { 'QUERY PLAN': [{ Plan: Record<string, unknown> }] }[] = await db.transaction((tx) =>
      tx.query(`EXPLAIN (FORMAT JSON) ${sent[0].sql}`, sent[0].params),
    );
    const onTable = nodes(plan.Plan).filter((n) => n['Relation Name'] === 'test_health');
    expect(onTable.map((n) => [n['Node Type'], n['Index Name']])).toEqual([
      ['Index Scan', 'test_health_pkey'],
      ['Index Scan', 'test_health_pkey'],
    ]);
    expect(String(onTable[0]['Index Cond'])).toMatch(/test_id >= .* AND .*test_id <= /);
    expect(nodes(plan.Plan).some((n) => n['Node Type'] === 'Hash')).toBe(false);
  });

  it('reads a batch of close ids by the same range through its prepared statement, once it has a generic plan', async () => {
    const repository = new TestHealthRepository(db);
    const ids = Array.from({ length: 1000 }, (_, i) => String(26_001 + i));
    const started = new Date();
    const plan = await db.transaction(async (tx) => {
      // The service's own path (a transaction's connection): a named prepared statement, planned generically after
      // its first five runs when that plan costs no more than the custom ones.
      for (let i = 0; i < 7; i++) {
        await repository.read(
          tx,
          ids,
          ids.map(() => OUTCOME.PLAIN_PASS),
          '9',
          started,
          ENTRY,
        );
      }
      const [prepared]: { generic_plans: string }[] = await tx.query(
        `SELECT generic_plans FROM pg_prepared_statements WHERE name = 'test-health-read-range-1'`,
      );
      expect(Number(prepared.generic_plans)).toBeGreaterThan(0);
      const [
        {
          'QUERY PLAN': [explained],
        },
      ]: { 'QUERY PLAN': [{ Plan: Record<string, unknown> }] }[] = await tx.query(
        // EXECUTE takes its arguments as literals (the test's own numbers and an ISO time).
        `EXPLAIN (FORMAT JSON) EXECUTE "test-health-read-range-1"(${ids[0]}, ${ids[ids.length - 1]}, 9, '${started.toISOString()}', '\\x${'01'.repeat(1000)}', '\\x000000000000', '\\x0000000000000000', 2, 1000)`,
      );
      return explained.Plan;
    });
    const onTable = nodes(plan).filter((n) => n['Relation Name'] === 'test_health');
    expect(onTable.map((n) => [n['Node Type'], n['Index Name']])).toEqual([
      ['Index Scan', 'test_health_pkey'],
      ['Index Scan', 'test_health_pkey'],
    ]);
    expect(String(onTable[0]['Index Cond'])).toMatch(/test_id >= .* AND .*test_id <= /);
    expect(nodes(plan).some((n) => n['Node Type'] === 'Hash')).toBe(false);
    expect(repeatScans(plan)).toEqual(['Tid Scan', 'Tid Scan']);
  });

  it("applies a batch's repeats to the rows its range scan found, by their place, not by a scan of the table", async () => {
    const repository = new TestHealthRepository(db);
    // 1,000 tests of one project, a tenth failing steadily and failing again, the rest passing.
    const ids = Array.from({ length: 1000 }, (_, i) => String(27_001 + i));
    const failing = ids.filter((_, i) => i % 10 === 7);
    await db.query(
      `UPDATE test_health SET last_status = 'FAILED', state = 'FAILING', win = decode($1, 'hex'), runs = 1
        WHERE test_id = ANY($2::bigint[])`,
      ['000000000005' + '22' + '0'.repeat(16), failing],
    );
    const codes = ids.map((_, i) =>
      outcomeCode({ status: i % 10 === 7 ? 'FAILED' : 'PASSED', otherStatuses: 0 }, 0.2),
    );
    const { read, sent } = await readSent(repository, ids, codes);
    expect(read.repeated.size).toBe(failing.length);
    const [
      {
        'QUERY PLAN': [plan],
      },
    ]: { 'QUERY PLAN': [{ Plan: Record<string, unknown> }] }[] = await db.transaction((tx) =>
      tx.query(`EXPLAIN (FORMAT JSON) ${sent[0].sql}`, sent[0].params),
    );
    expect(repeatScans(plan.Plan)).toEqual(['Tid Scan', 'Tid Scan']);
  });

  it("keeps a failing test's update HOT while it fails again the same day (no index holds the instant)", async () => {
    const repository = new TestHealthRepository(db);
    const ids = Array.from({ length: 100 }, (_, i) => String(30_003 + i * 10));
    const failing = (at: Date): TestHealth => ({
      ...newHealth(new Date('2026-01-01T00:00:00Z')),
      entries: [{ run: '9', bits: 0x22, stream: '0', commit: '0' }],
      runs: 1,
      lastStatus: 'FAILED',
      lastRunId: '9',
      lastFailedAt: at,
      state: 'FAILING',
    });
    // Counted from here: the backend's counts include its earlier transactions' until they are flushed.
    const counted = async (tx: EntityManager) => {
      const [counts]: { updated: string; hot: string }[] = await tx.query(
        `SELECT n_tup_upd AS updated, n_tup_hot_upd AS hot FROM pg_stat_xact_user_tables WHERE relname = 'test_health'`,
      );
      return { updated: Number(counts.updated), hot: Number(counts.hot) };
    };
    const hot = await db.transaction(async (tx) => {
      const before = await counted(tx);
      // The first failure of the day moves the indexed day; the next two move only the instant.
      for (const at of ['2026-03-02T01:00:00Z', '2026-03-02T05:00:00Z', '2026-03-02T09:30:00Z']) {
        const rows = ids.map((testId) => ({
          testId,
          health: failing(new Date(at)),
          before: failing(new Date(0)),
        }));
        expect(await repository.update(tx, rows)).toEqual([]);
      }
      const after = await counted(tx);
      return { updated: after.updated - before.updated, hot: after.hot - before.hot };
    });
    expect(hot.updated).toBe(300);
    expect(hot.hot).toBeGreaterThanOrEqual(200);
  });

  it('lists tests by last failure across days, newest first, the never failed last', async () => {
    const [{ id: projectId }]: { id: string }[] = await db.query(
      `INSERT INTO projects (key, name) VALUES ('LF', 'last failed') RETURNING id`,
    );
    // Ids past the synthetic rows above.
    await db.query(`SELECT setval(pg_get_serial_sequence('test_cases', 'id'), 100000)`);
    const cases: { id: string }[] = await db.query(
      `INSERT INTO test_cases (project_id, identity, suite, name)
       SELECT $1, md5('lf' || g)::uuid, 'S', 'test ' || g FROM generate_series(1, 12) g RETURNING id`,
      [projectId],
    );
    // Three days, several failures a day (hours out of order with the ids), and tests that never failed.
    await db.query(
      `INSERT INTO test_health (test_id, project_id, runs, last_status, state, last_failed_at)
       SELECT c.id, $1, 2, 'PASSED', 'HEALTHY',
              CASE WHEN n % 4 = 0 THEN NULL
                   ELSE timestamptz '2026-03-01T00:00:00Z' + make_interval(days => (n % 3)::int, hours => ((n * 7) % 24)::int) END
         FROM unnest($2::bigint[]) WITH ORDINALITY AS c(id, n)`,
      [projectId, cases.map((c) => c.id)],
    );
    const expected: { id: string }[] = await db.query(
      `SELECT test_id AS id FROM test_health WHERE project_id = $1 ORDER BY last_failed_at DESC NULLS LAST, test_id`,
      [projectId],
    );
    const [page] = await new RunsRepository(db).listTests(
      String(projectId),
      {},
      { page: 0, size: 50, offset: 0, sort: [{ field: 'lastFailedAt', direction: 'DESC' }] },
    );
    expect(page.map((t) => t.id)).toEqual(expected.map((r) => String(r.id)));
    expect(page.at(-1)!.lastFailedAt).toBeNull();
  });
});
