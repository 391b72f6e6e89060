import { DataSource } from 'typeorm';
import { TestHealthSecondRunHot1795890000000 } from '../../../migrations/1795890000000-TestHealthSecondRunHot.js';
import { DEFAULT_SETTINGS } from '../../../src/common/project-settings.js';
import { dataSourceOptions } from '../../../src/database/data-source-options.js';
import { type FlakyPolicy, applyOutcome, newHealth, steady } from '../../../src/stability/flakiness.js';
import {
  TestHealthRepository,
  entryParts,
  outcomeCode,
} from '../../../src/stability/test-health.repository.js';
import { createTestDatabase, TestDatabase } from '../../support/database.js';

/** The project's default policy. */
const POLICY: FlakyPolicy = DEFAULT_SETTINGS.flaky;

/**
 * A test's second run (every test of a suite meets it the second time the suite runs): a plain pass of a test that
 * ran once and passed writes nothing, as a steady test's later plain passes do (its row lags; the list reads the runs
 * since from the outcomes, caughtUp brings the row up to date when it next needs it). flake_rate is 0 from the first
 * run on (migration TestHealthSecondRunHot), so a second pass leaves nothing the row holds but its window, run count
 * and last run behind. A row a replica on the code before stored (a NULL rate) is weighed and moved on as before.
 */
describe('test health: the second run', () => {
  let database: TestDatabase;
  let db: DataSource;
  let repository: TestHealthRepository;
  const TESTS = 1000;
  const ids = Array.from({ length: TESTS }, (_, i) => String(i + 1));
  const STARTED = new Date('2026-11-20T10:00:00.000Z');

  beforeAll(async () => {
    database = await createTestDatabase();
    db = await new DataSource(dataSourceOptions(database.url, 2)).initialize();
    repository = new TestHealthRepository(db);
  }, 60_000);
  afterAll(async () => {
    await db?.destroy();
    await database?.drop();
  });

  it('stores a test that ran once with a flake rate of 0, read as none, and writes nothing for its second plain pass', async () => {
    // The first run: new tests' rows, COPYed as the results writer stores them (one health object an outcome).
    const { health: first } = applyOutcome(
      newHealth(STARTED),
      { run: '1', stream: '0', commit: '0', startedAt: STARTED, status: 'PASSED', otherStatuses: 0 },
      POLICY,
      new Date(),
    );
    expect(first).toMatchObject({ runs: 1, flakeRate: null });
    expect(steady(first)).toBe(true);
    await db.transaction((tx) =>
      repository.insertNew(
        tx,
        '1',
        ids.map((testId) => ({ testId, health: first })),
      ),
    );
    const [stored]: { nulls: number; zeros: number }[] = await db.query(
      `SELECT count(*) FILTER (WHERE flake_rate IS NULL)::int AS nulls, count(*) FILTER (WHERE flake_rate = 0)::int AS zeros
         FROM test_health`,
    );
    expect(stored).toEqual({ nulls: 0, zeros: TESTS });
    expect((await db.transaction((tx) => repository.lock(tx, ['1']))).get('1')).toMatchObject({
      runs: 1,
      flakeRate: null,
    });

    // The second run: every test passes plainly, and is quiet: nothing is written.
    const counted = await db.transaction(async (tx) => {
      const read = await repository.read(
        tx,
        ids,
        ids.map(() => outcomeCode({ status: 'PASSED', otherStatuses: 0 }, POLICY.flipRate)),
        '2',
        new Date(STARTED.getTime() + 3_600_000),
        { ...entryParts('2', '0', '0'), window: POLICY.window },
      );
      const [n]: { updated: string }[] = await tx.query(
        `SELECT pg_stat_get_xact_tuples_updated('test_health'::regclass) AS updated`,
      );
      return {
        quiet: read.quiet.size,
        repeated: read.repeated.size,
        stored: read.stored.size,
        updated: Number(n.updated),
      };
    });
    expect(counted).toEqual({ quiet: TESTS, repeated: 0, stored: 0, updated: 0 });
    // What that pass leaves, as applyOutcome weighs it: only the window, run count, flake rate and last run move.
    const { health: second, transitions } = applyOutcome(
      first,
      {
        run: '2',
        stream: '0',
        commit: '0',
        startedAt: new Date(STARTED.getTime() + 3_600_000),
        status: 'PASSED',
        otherStatuses: 0,
      },
      POLICY,
      new Date(),
    );
    expect(transitions).toEqual({ becameFlaky: false, quarantined: false, released: null });
    expect(second).toEqual({ ...first, entries: second.entries, runs: 2, flakeRate: 0, lastRunId: '2' });
  });

  it('weighs and moves on a row written by a replica on the code before (a NULL rate until the test ran twice)', async () => {
    // Run 1's plain pass as the code before the migration stored it, during a rolling upgrade.
    await db.query(
      `INSERT INTO test_health (test_id, project_id, win, runs, flake_rate, last_status, last_run_id, state, first_seen_at)
       VALUES (7001, 3, decode($1, 'hex'), 1, NULL, 'PASSED', 1, 'HEALTHY', $2)`,
      ['000000000001110000000000000000', STARTED],
    );
    const later = new Date(STARTED.getTime() + 3_600_000);
    await db.transaction(async (tx) => {
      const read = await repository.read(
        tx,
        ['7001'],
        [outcomeCode({ status: 'PASSED', otherStatuses: 0 }, POLICY.flipRate)],
        '2',
        later,
        { ...entryParts('2', '0', '0'), window: POLICY.window },
      );
      // Not quiet (its rate would stay NULL): answered, to be weighed in Node and written.
      expect({ quiet: read.quiet.size, repeated: read.repeated.size }).toEqual({ quiet: 0, repeated: 0 });
      const before = read.stored.get('7001')!;
      expect(before).toMatchObject({ runs: 1, flakeRate: null });
      const { health } = applyOutcome(
        before,
        { run: '2', stream: '0', commit: '0', startedAt: later, status: 'PASSED', otherStatuses: 0 },
        POLICY,
        new Date(),
      );
      expect(await repository.update(tx, [{ testId: '7001', health, before }], read.versions)).toEqual([]);
    });
    const [row]: { runs: number; flake_rate: number | null }[] = await db.query(
      'SELECT runs, flake_rate FROM test_health WHERE test_id = 7001',
    );
    expect(row).toEqual({ runs: 2, flake_rate: 0 });
  });

  it('weighs and writes the second plain pass while SVC_HEALTH_QUIET_SECOND_RUN is off, so that a replica of a release before reads its row up to date', async () => {
    // During a rolling upgrade (README, "Upgrading replicas one at a time"): such a replica takes a row of one run for
    // one that holds every run, so the new replicas write the second pass, and leave only the later ones unwritten.
    const upgrading = new TestHealthRepository(db, { quietSecondRun: false });
    const tests = Array.from({ length: 40 }, (_, i) => String(9001 + i));
    const first = applyOutcome(
      newHealth(STARTED),
      { run: '1', stream: '0', commit: '0', startedAt: STARTED, status: 'PASSED', otherStatuses: 0 },
      POLICY,
      new Date(),
    ).health;
    await db.transaction((tx) =>
      upgrading.insertNew(
        tx,
        '4',
        tests.map((testId) => ({ testId, health: first })),
      ),
    );
    const pass = (run: string, at: Date) =>
      db.transaction(async (tx) => {
        const read = await upgrading.read(
          tx,
          tests,
          tests.map(() => outcomeCode({ status: 'PASSED', otherStatuses: 0 }, POLICY.flipRate)),
          run,
          at,
          { ...entryParts(run, '0', '0'), window: POLICY.window },
        );
        const updates = [...read.stored].map(([testId, before]) => ({
          testId,
          before,
          health: applyOutcome(
            before,
            { run, stream: '0', commit: '0', startedAt: at, status: 'PASSED', otherStatuses: 0 },
            POLICY,
            new Date(),
          ).health,
        }));
        expect(await upgrading.update(tx, updates, read.versions)).toEqual([]);
        return { quiet: read.quiet.size, stored: read.stored.size };
      });
    // The second run (one range read, as a batch's): every test answered and written.
    expect(await pass('2', new Date(STARTED.getTime() + 3_600_000))).toEqual({
      quiet: 0,
      stored: tests.length,
    });
    const rows: { runs: number; last_run_id: string; entries: number }[] = await db.query(
      `SELECT DISTINCT runs, last_run_id, length(win) / 15 AS entries FROM test_health WHERE test_id = ANY($1::bigint[])`,
      [tests],
    );
    expect(rows).toEqual([{ runs: 2, last_run_id: '2', entries: 2 }]);
    // The third: quiet, as every later plain pass of a steady test.
    expect(await pass('3', new Date(STARTED.getTime() + 7_200_000))).toEqual({
      quiet: tests.length,
      stored: 0,
    });
  });

  it('gets the rates of tests that have not run twice back to none from the migration down, and 0 again up', async () => {
    const runner = db.createQueryRunner();
    await runner.startTransaction();
    try {
      await runner.query(
        `INSERT INTO test_health (test_id, project_id, runs, flake_rate) VALUES (5001, 2, 1, 0), (5002, 2, 3, 0.5)`,
      );
      const state = async () => ({
        rates: (
          await runner.query(
            'SELECT runs, flake_rate FROM test_health WHERE test_id IN (5001, 5002) ORDER BY test_id',
          )
        ).map((r: { runs: number; flake_rate: number | null }) => [r.runs, r.flake_rate]),
        options: (
          await runner.query(`SELECT reloptions FROM pg_class WHERE oid = 'test_health'::regclass`)
        )[0].reloptions,
      });
      const migration = new TestHealthSecondRunHot1795890000000();
      await migration.down(runner);
      expect(await state()).toEqual({
        rates: [
          [1, null],
          [3, 0.5],
        ],
        options: ['fillfactor=70'],
      });
      await migration.up(runner);
      expect(await state()).toEqual({
        rates: [
          [1, 0],
          [3, 0.5],
        ],
        options: ['fillfactor=45'],
      });
    } finally {
      await runner.rollbackTransaction();
      await runner.release();
    }
  });
});
