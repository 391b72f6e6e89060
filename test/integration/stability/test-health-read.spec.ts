import { DataSource, type EntityManager } from 'typeorm';
import { dataSourceOptions } from '../../../src/database/data-source-options.js';
import {
  type HealthRead,
  OUTCOME,
  type RunEntry,
  TestHealthRepository,
  entryParts,
} from '../../../src/stability/test-health.repository.js';
import { createTestDatabase, TestDatabase } from '../../support/database.js';

type PlanNode = { Plans?: PlanNode[] } & Record<string, unknown>;

/** Every node of a plan, flattened. */
function nodes(plan: PlanNode): PlanNode[] {
  // Without the read's CTEs `f` and `sk` (its repeats: plain failures of tests failing steadily, skips of tests that
  // never ran).
  if (['CTE f', 'CTE sk'].includes(String(plan['Subplan Name']))) {
    return [];
  }
  return [plan, ...(plan.Plans ?? []).flatMap(nodes)];
}

/** The run's entry for `read` (run 100, no stream, no commit; a window of 30). */
const ENTRY: RunEntry = { ...entryParts('100', '0', '0'), window: 30 };

/** Each test's outcome code for `read`: a plain pass where `plain` says so, else another outcome. */
const codeOf = (plain: (id: number) => boolean) => (id: number) =>
  plain(id) ? OUTCOME.PLAIN_PASS : OUTCOME.OTHER;

/** A window entry's bytes (see migration TestHealth): run (6), bits (1), stream (4), commit (4). */
function entry(run: number, bits: number): string {
  return run.toString(16).padStart(12, '0') + bits.toString(16).padStart(2, '0') + '0'.repeat(16);
}
const PASS = 0x10;
const FAIL = 0x22;
const PASS_AFTER_FAILING = 0x12;

/**
 * The rows of every kind `read` tells apart, with whether each is quiet for a plain pass of run 100 (a test that has
 * run once, and passed, too), or has that pass applied by the read itself (`repeated`: none of these kinds since a
 * second plain pass is quiet; the repeats are plain failures and skips, repeats.spec.ts).
 */
const KINDS: { kind: string; columns: string; quiet: boolean; repeated?: boolean }[] = [
  { kind: 'steady', columns: '', quiet: true },
  {
    kind: 'steady, failed before its window',
    columns: `last_failed_at = now() - interval '90 days'`,
    quiet: true,
  },
  {
    kind: 'failed in its window',
    columns: `last_failed_at = now(), win = decode('${entry(7, FAIL)}${entry(8, PASS)}', 'hex')`,
    quiet: false,
  },
  {
    kind: 'passed on a retry in its window',
    columns: `last_failed_at = now(), win = decode('${entry(7, PASS_AFTER_FAILING)}${entry(8, PASS)}', 'hex')`,
    quiet: false,
  },
  { kind: 'flaky', columns: `flaky = true, state = 'FLAKY', flake_rate = 0.5`, quiet: false },
  { kind: 'quarantined', columns: `q_since = now(), q_reason = 'x', q_auto = false`, quiet: false },
  { kind: 'failing', columns: `last_status = 'FAILED', state = 'FAILING'`, quiet: false },
  {
    kind: 'one run',
    columns: `runs = 1, win = decode('${entry(8, PASS)}', 'hex')`,
    quiet: true,
  },
  {
    kind: 'one run, stored without a rate by a replica on the code before',
    columns: `runs = 1, flake_rate = NULL, win = decode('${entry(8, PASS)}', 'hex')`,
    quiet: false,
  },
  { kind: 'written by a later run', columns: 'last_run_id = 150', quiet: false },
  {
    kind: 'first seen after the run started',
    columns: `first_seen_at = now() + interval '1 hour'`,
    quiet: false,
  },
];

/**
 * TestHealthRepository.read: the batch's tests as one range of the primary key (close ids: the common case) answer
 * exactly what one probe a test answers, for every kind of row, for plain passes and other outcomes, for tests
 * without a row, and with other tests' rows inside the range.
 */
describe('test health: the read of a batch', () => {
  let database: TestDatabase;
  let db: DataSource;
  const RUN = '100';
  const started = new Date(Date.now() + 60_000);
  /** Ids 1 to 400, ten kinds in turn; every 13th has no row. */
  const kindOf = (id: number) => KINDS[id % KINDS.length];
  const hasRow = (id: number) => id % 13 !== 5;

  beforeAll(async () => {
    database = await createTestDatabase();
    db = await new DataSource(dataSourceOptions(database.url, 2)).initialize();
    await db.query(
      `INSERT INTO test_health (test_id, project_id, win, runs, last_status, last_run_id, state, first_seen_at)
       SELECT i, 1, decode($1, 'hex'), 3, 'PASSED', 9, 'HEALTHY', now() - interval '10 days'
         FROM generate_series(1, 400) i WHERE i % 13 <> 5`,
      [entry(7, PASS) + entry(8, PASS) + entry(9, PASS)],
    );
    for (const [k, { columns }] of KINDS.entries()) {
      if (columns) {
        await db.query(`UPDATE test_health SET ${columns} WHERE test_id % ${KINDS.length} = ${k}`);
      }
    }
    await db.query('VACUUM ANALYZE test_health');
  }, 60_000);
  afterAll(async () => {
    await db?.destroy();
    await database?.drop();
  });

  /** The statements `read` sends, and what it answers. */
  async function read(ids: number[], plain: (id: number) => boolean) {
    const repository = new TestHealthRepository(db);
    const sent: string[] = [];
    const answered: { test_id: string | null; quiet_ids?: string | null }[][] = [];
    const answer = await rolledBack((tx) =>
      repository.read(
        {
          query: async (sql: string, params: unknown[]) => {
            sent.push(sql);
            const rows: { test_id: string | null }[] = await tx.query(sql, params);
            answered.push(rows);
            return rows;
          },
        } as Pick<EntityManager, 'query'>,
        ids.map(String),
        ids.map(codeOf(plain)),
        RUN,
        started,
        ENTRY,
      ),
    );
    return { answer, sent, answered };
  }

  /** What one probe a test answers (the repository's own path for scattered ids). */
  async function probed(ids: number[], plain: (id: number) => boolean): Promise<HealthRead> {
    const repository = new TestHealthRepository(db);
    return rolledBack((tx) =>
      repository['readEach'](tx, ids.map(String), ids.map(codeOf(plain)), RUN, started, ENTRY),
    );
  }

  /** `work` in a transaction rolled back after it (the read applies its repeats: each read sees the rows as set up). */
  async function rolledBack<T>(work: (tx: EntityManager) => Promise<T>): Promise<T> {
    const runner = db.createQueryRunner();
    await runner.startTransaction();
    try {
      return await work(runner.manager);
    } finally {
      await runner.rollbackTransaction();
      await runner.release();
    }
  }

  const comparable = (r: HealthRead) => ({
    quiet: [...r.quiet].sort(),
    repeated: [...r.repeated].sort(),
    stored: [...r.stored.entries()].sort(([a], [b]) => Number(a) - Number(b)),
    versions: [...r.versions.entries()].sort(([a], [b]) => Number(a) - Number(b)),
  });

  it.each([
    ['every outcome a plain pass', () => true, false],
    ['every third outcome a failure', (id: number) => id % 3 !== 0, false],
    ['every test with a row (its quiet ones not listed)', () => true, true],
    ['every test with a row, every third outcome a failure', (id: number) => id % 3 !== 0, true],
  ])('answers for a range of ids what a probe a test answers: %s', async (_name, plain, withRows) => {
    // Every other id of 100 to 299 (the range holds rows that are not the batch's), or every id of 100 to 199 that
    // has a row.
    const ids = withRows
      ? Array.from({ length: 100 }, (_, i) => 100 + i).filter(hasRow)
      : Array.from({ length: 100 }, (_, i) => 100 + 2 * i);
    const { answer, sent, answered } = await read(ids, plain);
    // The quiet tests are listed only when some test of the batch has no row.
    const summary = answered[0].find((r) => r.test_id === null);
    expect(summary?.quiet_ids === null).toBe(withRows);
    // One statement, though steady tests fail (their rows are answered by it, for their own outcome).
    expect(sent).toHaveLength(1);
    expect(sent[0]).toContain('BETWEEN');
    expect(comparable(answer)).toEqual(comparable(await probed(ids, plain)));
    // And it is right on its own: quiet exactly where the kind and the outcome say so, a test without a row
    // neither quiet nor stored.
    for (const id of ids) {
      const quiet = hasRow(id) && plain(id) && kindOf(id).quiet;
      const repeated = hasRow(id) && plain(id) && Boolean(kindOf(id).repeated);
      expect([String(id), answer.quiet.has(String(id))]).toEqual([String(id), quiet]);
      expect([String(id), answer.repeated.has(String(id))]).toEqual([String(id), repeated]);
      expect([String(id), answer.stored.has(String(id))]).toEqual([
        String(id),
        hasRow(id) && !quiet && !repeated,
      ]);
    }
    expect(answer.stored.get('102')).toMatchObject({ runs: 3, lastStatus: 'PASSED' });
  });

  it("passes over the rows of the range that are not the batch's (two batches' tests interleaved)", async () => {
    // Every other id of 100 to 299, every third outcome a failure: the others' rows are not answered at all.
    const ids = Array.from({ length: 100 }, (_, i) => 100 + 2 * i);
    const { answered } = await read(ids, (id) => id % 3 !== 0);
    const mine = new Set(ids.map(String));
    const rows = answered[0];
    const full = rows.filter((r) => r.test_id !== null).map((r) => String(r.test_id));
    const quiet = rows.find((r) => r.test_id === null)?.quiet_ids?.split(',') ?? [];
    expect(full.length + quiet.length).toBeGreaterThan(0);
    expect([...full, ...quiet].filter((id) => !mine.has(id))).toEqual([]);
  });

  it('probes each test of a batch whose ids are far apart', async () => {
    const ids = Array.from({ length: 40 }, (_, i) => 1 + i * 10);
    const { answer, sent } = await read(ids, () => true);
    expect(sent).toHaveLength(1);
    expect(sent[0]).not.toContain('BETWEEN');
    expect(comparable(answer)).toEqual(comparable(await probed(ids, () => true)));
  });

  it('reads the range with one scan of the primary key, and probes only the tests that are not quiet', async () => {
    const { sent } = await read(
      Array.from({ length: 100 }, (_, i) => 100 + i),
      () => true,
    );
    const [
      {
        'QUERY PLAN': [plan],
      },
    ]: { 'QUERY PLAN': [{ Plan: PlanNode }] }[] = await rolledBack((tx) =>
      tx.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${sent[0]}`, [
        '100',
        '199',
        RUN,
        started,
        Buffer.alloc(100, OUTCOME.PLAIN_PASS),
        ENTRY.entryHead,
        ENTRY.entryTail,
        ENTRY.window,
        100,
      ]),
    );
    const scans = nodes(plan.Plan).filter((n) => n['Relation Name'] === 'test_health');
    expect(scans.map((n) => [n['Node Type'], n['Index Name'], n['Actual Loops']])).toEqual([
      ['Index Scan', 'test_health_pkey', 1],
      // One probe a test of the range that is not quiet (the quiet kinds are 3 in 11; every 13th has no row).
      ['Index Scan', 'test_health_pkey', expect.any(Number)],
    ]);
    expect(String(scans[0]['Index Cond'])).toMatch(/test_id >= .* AND .*test_id <= /);
    expect(scans[1]['Actual Loops']).toBeLessThan(100);
  });
});
