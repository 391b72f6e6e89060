import { jest } from '@jest/globals';
import { EventEmitter2 } from '@nestjs/event-emitter';
import { DataSource } from 'typeorm';
import { dataSourceOptions } from '../../../src/database/data-source-options.js';
import type { NotificationOutbox } from '../../../src/notifications/notification-outbox.js';
import type { ResultStatus } from '../../../src/results/entities.js';
import type { TestOutcome } from '../../../src/results/results-observers.js';
import { FlakyPolicyCache } from '../../../src/stability/flaky-policy.cache.js';
import {
  type FlakyPolicy,
  type TestHealth,
  applyOutcome,
  newHealth,
} from '../../../src/stability/flakiness.js';
import { StabilityObserver } from '../../../src/stability/stability.observer.js';
import {
  OUTCOME,
  TestHealthRepository,
  entryParts,
  outcomeCode,
} from '../../../src/stability/test-health.repository.js';
import { createTestDatabase, TestDatabase } from '../../support/database.js';

/** A window entry's bytes (see migration TestHealth): run (6), bits (1), stream (4), commit (4). */
function entry(run: number, bits: number): string {
  return run.toString(16).padStart(12, '0') + bits.toString(16).padStart(2, '0') + '0000007b000001c8';
}
const FAILED = 0x22;
const BROKEN = 0x44;
const PASSED = 0x11;
const PASSED_ON_RETRY = 0x13;
const FAILED_AFTER_A_PASS = 0x23;

const RUN = 100;
const STARTED = new Date('2026-11-20T10:00:00.000Z');
const POLICY: FlakyPolicy = {
  window: 5,
  minRuns: 3,
  flipRate: 0.3,
  autoQuarantine: true,
  releaseAfterPasses: 3,
};

/** The columns of a test that never ran: every outcome of it so far was a skip. */
const NEVER_RAN_BUT_STATE = `win = ''::bytea, runs = 0, flake_rate = 0, last_status = 'SKIPPED'`;
const NEVER_RAN = `${NEVER_RAN_BUT_STATE}, state = 'HEALTHY'`;

/**
 * The columns of a test that has run once (its window `win`), and passed; last failed `lastFailed`, in `state`, with
 * a flake rate stored as `rate`.
 */
const passedOnce = (win = entry(7, PASSED), lastFailed = 'NULL', state = 'HEALTHY', rate = '0') =>
  `win = decode('${win}', 'hex'), runs = 1, flake_rate = ${rate}, last_status = 'PASSED', state = '${state}',
   last_failed_at = ${lastFailed}`;
const PASSED_ONCE = passedOnce();

/**
 * Rows of every kind, with how the run's outcome (a plain failure unless `status` says otherwise; `other`: its other
 * attempts' statuses) applies to it: in SQL (a plain failure to a test failing steadily, a skip to a test that never
 * ran), where what that leaves must be what applyOutcome makes of the row (flakiness.ts); quiet (a plain pass to a
 * steady test, one that has run once included), where the row is left as it was and applyOutcome would change
 * nothing of it but its window, run count, flake rate and last run (`steady`); the others are answered to be weighed
 * in Node.
 */
const KINDS: {
  kind: string;
  columns: string;
  status?: ResultStatus;
  other?: number;
  applied: 'sql' | 'quiet' | 'node';
}[] = [
  { kind: 'failing steadily, window not full', columns: '', applied: 'sql' },
  {
    kind: 'failing steadily, window full',
    columns: `win = decode('${[3, 4, 5, 6, 7].map((r) => entry(r, FAILED)).join('')}', 'hex'), runs = 5`,
    applied: 'sql',
  },
  {
    kind: 'failing steadily, a window larger than the policy now keeps',
    columns: `win = decode('${[1, 2, 3, 4, 5, 6, 7].map((r) => entry(r, FAILED)).join('')}', 'hex'), runs = 7`,
    applied: 'sql',
  },
  { kind: 'broken now, failed before', columns: '', status: 'BROKEN', applied: 'sql' },
  {
    kind: 'failed and broke before',
    columns: `win = decode('${entry(6, BROKEN)}${entry(7, FAILED)}', 'hex'), runs = 2, last_status = 'FAILED'`,
    applied: 'sql',
  },
  {
    kind: 'one run so far (no flake rate)',
    columns: `win = decode('${entry(7, FAILED)}', 'hex'), runs = 1, flake_rate = 0`,
    applied: 'sql',
  },
  {
    kind: 'last failure after the run started',
    columns: `last_failed_at = $1::timestamptz + interval '1 day'`,
    applied: 'sql',
  },
  {
    kind: 'first seen after the run started',
    columns: `first_seen_at = $1::timestamptz + interval '1 hour'`,
    applied: 'sql',
  },
  {
    kind: 'passed in its window',
    columns: `win = decode('${entry(6, PASSED)}${entry(7, FAILED)}', 'hex'), runs = 2`,
    applied: 'node',
  },
  {
    kind: 'passed on a retry in its window',
    columns: `win = decode('${entry(6, PASSED_ON_RETRY)}${entry(7, FAILED)}', 'hex'), runs = 2`,
    applied: 'node',
  },
  {
    kind: 'failed in its window after an attempt passed',
    columns: `win = decode('${entry(6, FAILED_AFTER_A_PASS)}${entry(7, FAILED)}', 'hex'), runs = 2`,
    applied: 'node',
  },
  {
    kind: 'quarantined',
    columns: `q_since = now(), q_reason = 'x', q_auto = true, state = 'QUARANTINED'`,
    applied: 'node',
  },
  { kind: 'flaky', columns: `flaky = true, flake_rate = 0.5, state = 'FLAKY'`, applied: 'node' },
  { kind: 'skipped last', columns: `last_status = 'SKIPPED', state = 'HEALTHY'`, applied: 'node' },
  { kind: 'written by this run already', columns: `last_run_id = ${RUN}`, applied: 'node' },
  { kind: 'written by a later run', columns: `last_run_id = ${RUN + 5}`, applied: 'node' },
  { kind: 'never ran, skipped again', columns: NEVER_RAN, status: 'SKIPPED', applied: 'sql' },
  {
    kind: 'never ran, skipped again, first seen after the run started',
    columns: `${NEVER_RAN}, first_seen_at = $1::timestamptz + interval '1 hour', last_failed_at = NULL`,
    status: 'SKIPPED',
    applied: 'sql',
  },
  {
    kind: 'never ran, quarantined by a person, skipped',
    columns: `${NEVER_RAN_BUT_STATE}, q_since = now(), q_reason = 'x', q_auto = false, state = 'QUARANTINED'`,
    status: 'SKIPPED',
    applied: 'node',
  },
  {
    kind: 'never ran, skipped by this run already',
    columns: `${NEVER_RAN}, last_run_id = ${RUN}`,
    status: 'SKIPPED',
    applied: 'node',
  },
  { kind: 'failing steadily, skipped now', columns: '', status: 'SKIPPED', applied: 'node' },
  { kind: 'passed once, passes again', columns: PASSED_ONCE, status: 'PASSED', applied: 'quiet' },
  {
    kind: 'passed once, passes again with a skipped attempt',
    columns: PASSED_ONCE,
    status: 'PASSED',
    other: 8,
    applied: 'quiet',
  },
  {
    kind: 'passed once, failed before its window',
    columns: passedOnce(entry(7, PASSED), `$1::timestamptz - interval '40 days'`),
    status: 'PASSED',
    applied: 'quiet',
  },
  {
    kind: 'passed once, first seen after the run started',
    columns: `${PASSED_ONCE}, first_seen_at = $1::timestamptz + interval '1 hour'`,
    status: 'PASSED',
    applied: 'node',
  },
  {
    kind: 'passed once on a retry, passes again',
    // Its failed attempt is its last failure (flakiness.ts, applyOutcome), which makes quiet look at its window.
    columns: passedOnce(entry(7, PASSED_ON_RETRY), `$1::timestamptz - interval '1 day'`),
    status: 'PASSED',
    applied: 'node',
  },
  {
    kind: 'passed once, passes again after a failed attempt',
    columns: PASSED_ONCE,
    status: 'PASSED',
    other: 2,
    applied: 'node',
  },
  {
    kind: 'passed once, passed in this run already',
    columns: `${PASSED_ONCE}, last_run_id = ${RUN}`,
    status: 'PASSED',
    applied: 'node',
  },
  {
    kind: 'passed once, stored without a rate by a replica on the code before',
    columns: passedOnce(entry(7, PASSED), 'NULL', 'HEALTHY', 'NULL'),
    status: 'PASSED',
    applied: 'node',
  },
  {
    kind: 'passed once, quarantined',
    columns: `${passedOnce(entry(7, PASSED), 'NULL', 'QUARANTINED')}, q_since = now(), q_reason = 'x', q_auto = false`,
    status: 'PASSED',
    applied: 'node',
  },
  {
    kind: 'passed once, flaky',
    columns: `${passedOnce(entry(7, PASSED), 'NULL', 'FLAKY')}, flaky = true`,
    status: 'PASSED',
    applied: 'node',
  },
  {
    kind: 'failed once, passes now',
    columns: `win = decode('${entry(7, FAILED)}', 'hex'), runs = 1, flake_rate = 0`,
    status: 'PASSED',
    applied: 'node',
  },
  { kind: 'never ran, passes now', columns: NEVER_RAN, status: 'PASSED', applied: 'node' },
];

/**
 * TestHealthRepository.read with a batch's repeats (repeatsSql): a test failing steadily that failed again, or a test
 * that never ran skipped again, gets what applyOutcome would give it, in the read's own statement, and is answered as
 * done; a test that has run once and passed, passing again, is quiet as a steady test is; any other is answered with
 * its row, untouched, to be weighed in Node.
 */
describe('test health: plain failures of tests failing steadily and skips of tests that never ran applied by the read, second plain passes quiet', () => {
  let database: TestDatabase;
  let db: DataSource;
  let repository: TestHealthRepository;

  beforeAll(async () => {
    database = await createTestDatabase();
    db = await new DataSource(dataSourceOptions(database.url, 2)).initialize();
    repository = new TestHealthRepository(db);
    // The project of the rows (its health changes are logged: test_health_changes refers to it).
    await db.query(
      `INSERT INTO projects (id, key, name) OVERRIDING SYSTEM VALUE VALUES (1, 'REP', 'repeats')`,
    );
    // Ids 1 to 300 (a range), each kind in turn.
    await failingSteadily(Array.from({ length: 300 }, (_, i) => String(i + 1)));
    for (const [k, { columns }] of KINDS.entries()) {
      if (columns) {
        await db.query(
          `UPDATE test_health SET ${columns} WHERE test_id % ${KINDS.length} = ${k}`,
          columns.includes('$1') ? [STARTED] : [],
        );
      }
    }
  }, 60_000);
  afterAll(async () => {
    await db?.destroy();
    await database?.drop();
  });

  /** Rows of tests that failed in runs 6 and 7 (stream 123, commit 456) and in no other. */
  const failingSteadily = (testIds: string[]) =>
    db.query(
      `INSERT INTO test_health (test_id, project_id, win, runs, flake_rate, last_status, last_run_id, state,
                                first_seen_at, last_failed_at)
       SELECT i, 1, decode($1, 'hex'), 2, 0, 'FAILED', 7, 'FAILING', $2::timestamptz - interval '10 days',
              $2::timestamptz - interval '1 day'
         FROM unnest($3::bigint[]) i`,
      [entry(6, FAILED) + entry(7, FAILED), STARTED, testIds],
    );

  const ids = Array.from({ length: 300 }, (_, i) => String(i + 1));
  const kindOf = (id: string) => KINDS[Number(id) % KINDS.length];
  const statusOf = (id: string): ResultStatus => kindOf(id).status ?? 'FAILED';
  const otherOf = (id: string): number => kindOf(id).other ?? 0;

  it('leaves what applyOutcome leaves for those tests, and only those', async () => {
    const now = new Date();
    const before = await db.transaction((tx) => repository.lock(tx, ids));
    const answered = await db.transaction(async (tx) => {
      const read = await repository.read(
        tx,
        ids,
        ids.map((id) => outcomeCode({ status: statusOf(id), otherStatuses: otherOf(id) }, POLICY.flipRate)),
        String(RUN),
        STARTED,
        { ...entryParts(String(RUN), '123', '456'), window: POLICY.window },
      );
      return { read, after: await repository.lock(tx, ids) };
    });
    const { read, after } = answered;
    for (const id of ids) {
      const { kind, applied } = kindOf(id);
      const was = before.get(id)!;
      // What applyOutcome makes of the row: what the SQL must leave, or, for a quiet test, all a lagging row leaves out.
      const { health, transitions } = applyOutcome(
        was,
        {
          run: String(RUN),
          stream: '123',
          commit: '456',
          startedAt: STARTED,
          status: statusOf(id),
          otherStatuses: otherOf(id),
        },
        POLICY,
        now,
      );
      if (applied === 'quiet') {
        expect([kind, read.quiet.has(id), read.repeated.has(id), read.stored.has(id)]).toEqual([
          kind,
          true,
          false,
          false,
        ]);
        expect(transitions).toEqual({ becameFlaky: false, quarantined: false, released: null });
        expect([kind, health.runs, health.flakeRate]).toEqual([kind, 2, 0]);
        const lagging = { entries: [], runs: 0, flakeRate: 0, lastRunId: null };
        expect([kind, comparable({ ...health, ...lagging })]).toEqual([
          kind,
          comparable({ ...was, ...lagging }),
        ]);
        expect([kind, comparable(after.get(id)!)]).toEqual([kind, comparable(was)]);
      } else if (applied === 'sql') {
        expect([kind, read.repeated.has(id), read.stored.has(id)]).toEqual([kind, true, false]);
        expect(transitions).toEqual({ becameFlaky: false, quarantined: false, released: null });
        expect([kind, comparable(after.get(id)!)]).toEqual([kind, comparable(health)]);
      } else {
        expect([kind, read.repeated.has(id), read.stored.has(id)]).toEqual([kind, false, true]);
        expect([kind, comparable(after.get(id)!)]).toEqual([kind, comparable(was)]);
      }
    }
    expect(read.repeated.size).toBe(ids.filter((id) => kindOf(id).applied === 'sql').length);
  });

  it('answers the same through one probe a test (ids too far apart for a range)', async () => {
    const scattered = ['1000', '2000', '3000'];
    await failingSteadily([...scattered, '4000']);
    await db.query(`UPDATE test_health SET flaky = true, state = 'FLAKY' WHERE test_id = 3000`);
    await db.query(`UPDATE test_health SET ${NEVER_RAN} WHERE test_id = 4000`);
    const read = await db.transaction((tx) =>
      repository.read(
        tx,
        [...scattered, '4000'],
        [
          ...scattered.map(() => outcomeCode({ status: 'FAILED', otherStatuses: 0 }, POLICY.flipRate)),
          OUTCOME.SKIP,
        ],
        String(RUN),
        STARTED,
        { ...entryParts(String(RUN), '123', '456'), window: POLICY.window },
      ),
    );
    expect([...read.repeated].sort()).toEqual(['1000', '2000', '4000']);
    expect([...read.stored.keys()]).toEqual(['3000']);
    const rows: { test_id: string; runs: number; last_run_id: string }[] = await db.query(
      'SELECT test_id, runs, last_run_id FROM test_health WHERE test_id = ANY($1::bigint[]) ORDER BY test_id',
      [[...scattered, '4000']],
    );
    expect(rows.map((r) => [String(r.test_id), r.runs, String(r.last_run_id)])).toEqual([
      ['1000', 3, String(RUN)],
      ['2000', 3, String(RUN)],
      ['3000', 2, '7'],
      ['4000', 0, String(RUN)],
    ]);
  });

  it("settles a batch's tests failing steadily and its tests that never ran by its read alone, and weighs only the others in Node", async () => {
    const batch = Array.from({ length: 40 }, (_, i) => String(5001 + i));
    const disabled = Array.from({ length: 10 }, (_, i) => String(5041 + i));
    await failingSteadily([...batch, ...disabled]);
    await db.query(`UPDATE test_health SET ${NEVER_RAN} WHERE test_id = ANY($1::bigint[])`, [disabled]);
    // One of them passed in run 6: its failure now is weighed in Node, as any test with a pass in its window.
    await db.query(`UPDATE test_health SET win = decode($1, 'hex') WHERE test_id = 5007`, [
      entry(6, PASSED) + entry(7, FAILED),
    ]);
    const observer = new StabilityObserver(repository, new FlakyPolicyCache(), new EventEmitter2(), {
      owe: () => Promise.resolve(),
    } as unknown as NotificationOutbox);
    const updated = jest.spyOn(repository, 'update');
    const outcomes: TestOutcome[] = [
      ...batch.map((testId) => ({ testId, status: 'FAILED' as const, otherStatuses: 0 })),
      ...disabled.map((testId) => ({ testId, status: 'SKIPPED' as const, otherStatuses: 0 })),
    ];
    await db.transaction((tx) =>
      observer.outcomesSettled(
        tx,
        { id: String(RUN), projectId: '1', stream: 's', attributes: {}, startedAt: STARTED },
        outcomes,
      ),
    );
    expect(updated.mock.calls.map(([, rows]) => rows.map((r) => r.testId))).toEqual([['5007']]);
    updated.mockRestore();
    const rows: { test_id: string; runs: number; last_run_id: string; last_status: string }[] =
      await db.query(
        `SELECT test_id, runs, last_run_id, last_status FROM test_health WHERE test_id = ANY($1::bigint[])
        ORDER BY test_id`,
        [[...batch, ...disabled]],
      );
    expect(rows.map((r) => [r.runs, String(r.last_run_id), r.last_status])).toEqual([
      ...batch.map(() => [3, String(RUN), 'FAILED']),
      ...disabled.map(() => [0, String(RUN), 'SKIPPED']),
    ]);
  });

  it('weighs every plain pass and failure in Node under a flip rate of 0, where a repeat makes a test flaky', async () => {
    // Rule (c) at a flip rate of 0: any test that ran in minRuns runs is flaky, a steady one too.
    const policy: FlakyPolicy = { ...POLICY, flipRate: 0, minRuns: 2, autoQuarantine: false };
    expect(outcomeCode({ status: 'FAILED', otherStatuses: 0 }, 0)).toBe(OUTCOME.OTHER);
    expect(outcomeCode({ status: 'PASSED', otherStatuses: 0 }, 0)).toBe(OUTCOME.OTHER);
    expect(outcomeCode({ status: 'SKIPPED', otherStatuses: 0 }, 0)).toBe(OUTCOME.SKIP);
    await failingSteadily(['7001', '7002']);
    await db.query(`UPDATE test_health SET ${PASSED_ONCE} WHERE test_id = 7002`);
    const observer = new StabilityObserver(
      repository,
      { get: () => Promise.resolve(policy) } as unknown as FlakyPolicyCache,
      new EventEmitter2(),
      { owe: () => Promise.resolve() } as unknown as NotificationOutbox,
    );
    const after = await db.transaction(async (tx) => {
      await observer.outcomesSettled(
        tx,
        { id: String(RUN), projectId: '1', stream: 's', attributes: {}, startedAt: STARTED },
        [
          { testId: '7001', status: 'FAILED', otherStatuses: 0 },
          { testId: '7002', status: 'PASSED', otherStatuses: 0 },
        ],
      );
      return repository.lock(tx, ['7001', '7002']);
    });
    expect([...after].map(([id, h]) => [id, h.runs, h.flakeRate, h.flaky, h.state])).toEqual([
      ['7001', 3, 0, true, 'FLAKY'],
      ['7002', 2, 0, true, 'FLAKY'],
    ]);
  });

  it('stores the tests a write created each with what applyOutcome makes of its outcome, the tests of one outcome alike', async () => {
    // Six outcomes (other attempts' statuses as bits: 1 passed, 2 failed), three new tests each, interleaved.
    const kinds: Pick<TestOutcome, 'status' | 'otherStatuses'>[] = [
      { status: 'PASSED', otherStatuses: 0 },
      { status: 'FAILED', otherStatuses: 0 },
      { status: 'PASSED', otherStatuses: 2 },
      { status: 'FAILED', otherStatuses: 1 },
      { status: 'BROKEN', otherStatuses: 0 },
      { status: 'SKIPPED', otherStatuses: 0 },
    ];
    const created: TestOutcome[] = Array.from({ length: 18 }, (_, i) => ({
      testId: String(900_001 + i),
      ...kinds[i % kinds.length],
      created: true,
    }));
    const observer = new StabilityObserver(repository, new FlakyPolicyCache(), new EventEmitter2(), {
      owe: () => Promise.resolve(),
    } as unknown as NotificationOutbox);
    const now = new Date();
    const stored = await db.transaction(async (tx) => {
      await observer.outcomesSettled(
        tx,
        { id: String(RUN), projectId: '1', stream: 's', attributes: { commit: 'c1' }, startedAt: STARTED },
        created,
      );
      return repository.lock(
        tx,
        created.map((o) => o.testId),
      );
    });
    const policy = await db.transaction((tx) => new FlakyPolicyCache().get(tx, '1'));
    // The run's stream and commit as the observer keyed them (the entry of any test that ran).
    const { stream, commit } = stored.get(created[0].testId)!.entries[0];
    for (const o of created) {
      const was = stored.get(o.testId)!;
      const { health } = applyOutcome(
        newHealth(STARTED),
        {
          run: String(RUN),
          stream,
          commit,
          startedAt: STARTED,
          status: o.status,
          otherStatuses: o.otherStatuses,
        },
        policy,
        now,
      );
      expect([o.status, o.otherStatuses, comparable(was)]).toEqual([
        o.status,
        o.otherStatuses,
        comparable(health),
      ]);
    }
    // Each outcome's tests alike, and no two outcomes alike (each was weighed on its own).
    const rows = created.map((o) => JSON.stringify(comparable(stored.get(o.testId)!)));
    for (let i = 0; i < created.length; i++) {
      expect(rows[i]).toBe(rows[i % kinds.length]);
    }
    expect(new Set(rows).size).toBe(kinds.length);
  });

  it("settles an import's tests a slice at a time, two slices' reads under way at once, each slice's others weighed in Node", async () => {
    // 12,000 tests (three slices of 5,000), failing steadily; every 1,000th passed in run 6, so its failure now is
    // weighed in Node (in every slice).
    const tests = Array.from({ length: 12_000 }, (_, i) => String(100_001 + i));
    await failingSteadily(tests);
    const weighed = tests.filter((_, i) => i % 1000 === 0);
    await db.query(`UPDATE test_health SET win = decode($1, 'hex') WHERE test_id = ANY($2::bigint[])`, [
      entry(6, PASSED) + entry(7, FAILED),
      weighed,
    ]);
    const observer = new StabilityObserver(repository, new FlakyPolicyCache(), new EventEmitter2(), {
      owe: () => Promise.resolve(),
    } as unknown as NotificationOutbox);
    const updated = jest.spyOn(repository, 'update');
    const read = jest.spyOn(repository, 'read');
    const calls: string[] = [];
    read.mockImplementation(function (this: TestHealthRepository, ...args) {
      calls.push('read');
      return TestHealthRepository.prototype.read.apply(this, args);
    });
    updated.mockImplementation(function (this: TestHealthRepository, ...args) {
      calls.push('update');
      return TestHealthRepository.prototype.update.apply(this, args);
    });
    await db.transaction((tx) =>
      observer.outcomesSettled(
        tx,
        { id: String(RUN), projectId: '1', stream: 's', attributes: {}, startedAt: STARTED },
        tests.map((testId) => ({ testId, status: 'FAILED' as const, otherStatuses: 0 })),
      ),
    );
    expect(updated.mock.calls.map(([, rows]) => rows.map((r) => r.testId))).toEqual([
      weighed.slice(0, 5),
      weighed.slice(5, 10),
      weighed.slice(10),
    ]);
    // The second slice's read goes with the first's, the third's as soon as the first's answers: all three before the
    // first slice is weighed.
    expect(calls).toEqual(['read', 'read', 'read', 'update', 'update', 'update']);
    updated.mockRestore();
    read.mockRestore();
    const rows: { runs: number; last_run_id: string; n: string }[] = await db.query(
      `SELECT runs, last_run_id, count(*) AS n FROM test_health WHERE test_id = ANY($1::bigint[])
        GROUP BY runs, last_run_id`,
      [tests],
    );
    expect(rows.map((r) => [r.runs, String(r.last_run_id), Number(r.n)])).toEqual([[3, String(RUN), 12_000]]);
  });

  it('tells a later slice\'s read error, not the "transaction is aborted" it left for the slice being weighed', async () => {
    // 12,000 tests failing steadily (three slices); the first of every 1,000 passed in run 6, so each slice has a test
    // to weigh in Node. Another transaction holds a row of the second slice: its read waits, and times out, while the
    // first slice's statements are queued behind it.
    const tests = Array.from({ length: 12_000 }, (_, i) => String(200_001 + i));
    await failingSteadily(tests);
    await db.query(`UPDATE test_health SET win = decode($1, 'hex') WHERE test_id = ANY($2::bigint[])`, [
      entry(6, PASSED) + entry(7, FAILED),
      tests.filter((_, i) => i % 1000 === 0),
    ]);
    const holder = db.createQueryRunner();
    await holder.connect();
    await holder.startTransaction();
    await holder.query('SELECT 1 FROM test_health WHERE test_id = $1 FOR UPDATE', [tests[5_500]]);
    const observer = new StabilityObserver(repository, new FlakyPolicyCache(), new EventEmitter2(), {
      owe: () => Promise.resolve(),
    } as unknown as NotificationOutbox);
    try {
      await expect(
        db.transaction(async (tx) => {
          await tx.query(`SET LOCAL lock_timeout = '300ms'`);
          await observer.outcomesSettled(
            tx,
            { id: String(RUN), projectId: '1', stream: 's', attributes: {}, startedAt: STARTED },
            tests.map((testId) => ({ testId, status: 'FAILED' as const, otherStatuses: 0 })),
          );
        }),
      ).rejects.toMatchObject({ code: '55P03' });
    } finally {
      await holder.rollbackTransaction();
      await holder.release();
    }
  });
});

/** A test's health as compared: its window's entries and every field. */
function comparable(h: TestHealth) {
  return {
    ...h,
    firstSeenAt: h.firstSeenAt.toISOString(),
    lastFailedAt: h.lastFailedAt?.toISOString() ?? null,
    quarantine: h.quarantine && { ...h.quarantine, since: null },
  };
}
