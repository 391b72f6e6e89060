import { jest } from '@jest/globals';
import { EventEmitter2 } from '@nestjs/event-emitter';
import { DataSource } from 'typeorm';
import { dataSourceOptions } from '../../../src/database/data-source-options.js';
import type { NotificationOutbox } from '../../../src/notifications/notification-outbox.js';
import type { ResultStatus } from '../../../src/results/entities.js';
import type { TestOutcome } from '../../../src/results/results-observers.js';
import type { FlakyPolicyCache } from '../../../src/stability/flaky-policy.cache.js';
import type { FlakyPolicy } from '../../../src/stability/flakiness.js';
import { logHealthChanges } from '../../../src/stability/health-changes.js';
import { recountHealth } from '../../../src/stability/health-recount.js';
import { SettledTests } from '../../../src/stability/settled-tests.js';
import { StabilityObserver } from '../../../src/stability/stability.observer.js';
import { TestHealthRepository } from '../../../src/stability/test-health.repository.js';
import { createTestDatabase, TestDatabase } from '../../support/database.js';

const POLICY: FlakyPolicy = {
  window: 10,
  minRuns: 3,
  flipRate: 0.3,
  autoQuarantine: false,
  releaseAfterPasses: 3,
};
const STARTED = Date.parse('2026-11-29T08:00:00.000Z');

/** One replica: its own cache of settled tests, its repository (whose reads are counted) and observer. */
interface Replica {
  observer: StabilityObserver;
  /** The tests each of its reads of test_health rows was given. */
  reads: string[][];
  /** The tests each of its applications of known repeats was given. */
  repeats: string[][];
}

/**
 * A replica's cache of settled tests (src/stability/settled-tests.ts), against a real database: what one replica reads
 * settled it does not read again in a later run, and it hears, through test_health_changes, of every change another
 * replica, a person or the retention recount makes to such a test.
 */
describe('test health: settled tests remembered by each replica', () => {
  let database: TestDatabase;
  let db: DataSource;
  let projectId: string;
  let nextTest = 1000;

  const replica = (capacity = 1000): Replica => {
    const repository = new TestHealthRepository(db);
    const reads: string[][] = [];
    const repeats: string[][] = [];
    const read = repository.read.bind(repository);
    jest.spyOn(repository, 'read').mockImplementation((tx, ids, ...rest) => {
      reads.push([...ids]);
      return read(tx, ids, ...rest);
    });
    const applyRepeats = repository.applyRepeats.bind(repository);
    jest.spyOn(repository, 'applyRepeats').mockImplementation((tx, ids, ...rest) => {
      repeats.push([...ids]);
      return applyRepeats(tx, ids, ...rest);
    });
    const observer = new StabilityObserver(
      repository,
      { get: () => Promise.resolve(POLICY) } as unknown as FlakyPolicyCache,
      new EventEmitter2(),
      { owe: () => Promise.resolve() } as unknown as NotificationOutbox,
      new SettledTests(capacity),
    );
    return { observer, reads, repeats };
  };

  /** Run `run`'s outcomes written by `by`, committed, and what it does after the commit done. */
  const write = async (by: Replica, run: number, outcomes: [string, ResultStatus][], created = false) => {
    const after = await db.transaction((tx) =>
      by.observer.outcomesSettled(
        tx,
        {
          id: String(run),
          projectId,
          stream: 's',
          attributes: {},
          startedAt: new Date(STARTED + run * 60_000),
        },
        outcomes.map(([testId, status]): TestOutcome => ({ testId, status, otherStatuses: 0, created })),
      ),
    );
    after?.();
  };

  const row = async (testId: string) => {
    const [r]: { last_status: string; last_run_id: string; runs: number; state: string; q_passes: number }[] =
      await db.query(
        'SELECT last_status, last_run_id::text, runs, state, q_passes FROM test_health WHERE test_id = $1',
        [testId],
      );
    return r;
  };

  /** A new test, written by `by` in runs 1, 2 and 3 with these statuses (the first creates it). */
  const history = async (by: Replica, statuses: ResultStatus[]): Promise<string> => {
    const id = String(nextTest++);
    for (const [i, status] of statuses.entries()) {
      await write(by, i + 1, [[id, status]], i === 0);
    }
    return id;
  };

  beforeAll(async () => {
    database = await createTestDatabase();
    db = await new DataSource(dataSourceOptions(database.url, 2)).initialize();
    [{ id: projectId }] = await db.query(
      `INSERT INTO projects (key, name) VALUES ('SET', 'settled') RETURNING id`,
    );
    projectId = String(projectId);
  }, 60_000);
  afterAll(async () => {
    await db?.destroy();
    await database?.drop();
  });

  it("does not read a steady test's row again for its next plain pass, but reads it once another replica failed it", async () => {
    const a = replica();
    const b = replica();
    const id = await history(a, ['PASSED', 'PASSED', 'PASSED']);
    // Run 2 read it (quiet: nothing written) and remembered it: runs 3 and 4 do not read it.
    expect(a.reads).toEqual([[id]]);
    await write(a, 4, [[id, 'PASSED']]);
    expect(a.reads).toHaveLength(1);
    expect(await row(id)).toMatchObject({ last_status: 'PASSED', last_run_id: '1' });

    // Another replica fails it in run 5: its row changes, which it logs.
    await write(b, 5, [[id, 'FAILED']]);
    expect(await row(id)).toMatchObject({ last_status: 'FAILED', last_run_id: '5', state: 'FAILING' });

    // This replica's next pass of it is read and weighed again (a flip), not taken as quiet.
    await write(a, 6, [[id, 'PASSED']]);
    expect(a.reads.at(-1)).toEqual([id]);
    expect(await row(id)).toMatchObject({ last_status: 'PASSED', last_run_id: '6', runs: 3 });
  });

  it('leaves a plain failure of a test failing steadily unwritten within the hour, then applies it without a read, and reads it once it is no longer so', async () => {
    const a = replica();
    const b = replica();
    // Runs n start n minutes after STARTED.
    const id = await history(a, ['FAILED', 'FAILED', 'FAILED']);
    // Run 2 read it (its repeat applied and written by the read) and remembered it: runs 3 and 4, within the hour
    // of run 2, write nothing (the row lags).
    await write(a, 4, [[id, 'FAILED']]);
    expect(a.reads).toEqual([[id]]);
    expect(a.repeats).toEqual([]);
    expect(await row(id)).toMatchObject({
      last_status: 'FAILED',
      last_run_id: '2',
      runs: 2,
      state: 'FAILING',
    });

    // A failure of another status changes its last status: applied at once, without a read.
    await write(a, 5, [[id, 'BROKEN']]);
    expect(a.repeats).toEqual([[id]]);
    expect(await row(id)).toMatchObject({ last_status: 'BROKEN', last_run_id: '5', runs: 3 });
    // An hour after run 5, a repeat is written again.
    await write(a, 64, [[id, 'BROKEN']]);
    expect(a.repeats).toHaveLength(1);
    await write(a, 65, [[id, 'BROKEN']]);
    expect(a.repeats).toEqual([[id], [id]]);
    expect(a.reads).toHaveLength(1);
    expect(await row(id)).toMatchObject({ last_status: 'BROKEN', last_run_id: '65', runs: 4 });

    // Another replica passes it in run 66, which ends its steady failing: logged.
    await write(b, 66, [[id, 'PASSED']]);
    expect(await row(id)).toMatchObject({ last_status: 'PASSED', last_run_id: '66' });

    // This replica's next failure of it is read and weighed (a second flip), not taken as a repeat.
    await write(a, 67, [[id, 'FAILED']]);
    expect(a.repeats).toHaveLength(2);
    expect(a.reads.at(-1)).toEqual([id]);
    expect(await row(id)).toMatchObject({ last_status: 'FAILED', last_run_id: '67', runs: 6 });

    // A change this replica has not heard of yet (committed after it read the log): the row's columns say it, and the
    // repeat is not applied but read and weighed.
    const other = await history(a, ['FAILED', 'FAILED']);
    await db.query(`UPDATE test_health SET last_status = 'PASSED', last_run_id = 5 WHERE test_id = $1`, [
      other,
    ]);
    await write(a, 70, [[other, 'FAILED']]);
    expect(a.repeats.at(-1)).toEqual([other]);
    expect(a.reads.at(-1)).toEqual([other]);
    expect(await row(other)).toMatchObject({ last_status: 'FAILED', last_run_id: '70' });
  });

  it('carries the runs it left unwritten in the run count, not the window, through every later write', async () => {
    const a = replica();
    const b = replica();
    const id = await history(a, ['FAILED', 'FAILED', 'FAILED']);
    // As a write after a lag leaves it: 6 runs counted, the window holding the 2 that were written.
    await db.query('UPDATE test_health SET runs = 6 WHERE test_id = $1', [id]);
    // An hour after run 2, applied without a read; then by a replica that reads it.
    await write(a, 63, [[id, 'FAILED']]);
    expect(a.repeats).toEqual([[id]]);
    expect(await row(id)).toMatchObject({ last_run_id: '63', runs: 7 });
    await write(b, 64, [[id, 'FAILED']]);
    expect(b.reads).toEqual([[id]]);
    expect(await row(id)).toMatchObject({ last_run_id: '64', runs: 8 });
  });

  it('does not use what it remembers in a transaction that logged a change already (several runs in one)', async () => {
    const a = replica();
    const settled = (a.observer as unknown as { settled: SettledTests }).settled;
    const steadyTest = await history(a, ['PASSED', 'PASSED', 'PASSED']);
    const other = await history(a, ['PASSED', 'PASSED', 'PASSED']);
    const known = settled.known(projectId);
    const reads = a.reads.length;
    await db
      .transaction(async (tx) => {
        const at = (run: number) => new Date(STARTED + run * 60_000);
        // Run 4 fails the steady test (logged); run 5, in the same transaction, reads its tests.
        await a.observer.outcomesSettled(
          tx,
          { id: '4', projectId, stream: 's', attributes: {}, startedAt: at(4) },
          [{ testId: steadyTest, status: 'FAILED', otherStatuses: 0 }],
        );
        await a.observer.outcomesSettled(
          tx,
          { id: '5', projectId, stream: 's', attributes: {}, startedAt: at(5) },
          [{ testId: other, status: 'PASSED', otherStatuses: 0 }],
        );
        throw new Error('rolled back');
      })
      .catch(() => undefined);
    // Its own log entry, never committed, did not move what the replica knows; run 5 read its test.
    expect(settled.known(projectId)).toBe(known);
    expect(a.reads.length).toBe(reads + 2);
  });

  it('reads every test and writes every failure when it remembers nothing (SVC_HEALTH_SETTLED_CACHE=false)', async () => {
    const off = replica(0);
    const passing = await history(off, ['PASSED', 'PASSED', 'PASSED']);
    const failing = await history(off, ['FAILED', 'FAILED', 'FAILED']);
    expect(off.reads).toEqual([[passing], [passing], [failing], [failing]]);
    expect(off.repeats).toEqual([]);
    expect(await row(failing)).toMatchObject({ last_run_id: '3', runs: 3 });
  });

  it('reads a test again once a person quarantined it, so that its passes count towards its release', async () => {
    const a = replica();
    const id = await history(a, ['PASSED', 'PASSED', 'PASSED']);
    await new TestHealthRepository(db).change(projectId, id, async (found, save) => {
      await save({
        ...found!,
        state: 'QUARANTINED',
        quarantine: { since: new Date(), reason: 'slow', auto: false, byUserId: null, until: null },
      });
    });
    await write(a, 4, [[id, 'PASSED']]);
    expect(a.reads.at(-1)).toEqual([id]);
    expect(await row(id)).toMatchObject({ state: 'QUARANTINED', q_passes: 1 });
  });

  it("hears of the retention recount's changes, and remembers nothing of a write that did not commit", async () => {
    const a = replica();
    const id = await history(a, ['PASSED', 'PASSED', 'PASSED']);
    await db.transaction((tx) =>
      recountHealth(tx, projectId, [id], { runIds: ['1'], failedTestIds: [], startedAt: null }),
    );
    await write(a, 4, [[id, 'PASSED']]);
    expect(a.reads).toHaveLength(2);

    // Read settled in run 5, but rolled back: run 6 reads it again.
    await db
      .transaction(async (tx) => {
        await a.observer.outcomesSettled(
          tx,
          { id: '5', projectId, stream: 's', attributes: {}, startedAt: new Date(STARTED + 5 * 60_000) },
          [{ testId: id, status: 'PASSED', otherStatuses: 0 }],
        );
        throw new Error('rolled back');
      })
      .catch(() => undefined);
    expect(a.reads).toHaveLength(3);
    await write(a, 6, [[id, 'PASSED']]);
    expect(a.reads).toHaveLength(4);
    await write(a, 7, [[id, 'PASSED']]);
    expect(a.reads).toHaveLength(4);
  });

  it('numbers the log in order and keeps its latest entries only; a replica that fell behind them reads again', async () => {
    const a = replica();
    const id = await history(a, ['PASSED', 'PASSED', 'PASSED']);
    const [{ top }]: { top: string }[] = await db.query(
      'SELECT max(n)::text AS top FROM test_health_changes WHERE project_id = $1',
      [projectId],
    );
    // Changes of other tests up to number 1,099, then one more: the 100th after a thousand deletes the oldest.
    await db.query(
      `INSERT INTO test_health_changes (project_id, n, test_ids)
       SELECT $1, n, '{1}' FROM generate_series($2::bigint + 1, 1099) n`,
      [projectId, top],
    );
    await db.transaction((tx) => logHealthChanges(tx, projectId, ['2']));
    const [kept]: { first: string; last: string }[] = await db.query(
      'SELECT min(n)::text AS first, max(n)::text AS last FROM test_health_changes WHERE project_id = $1',
      [projectId],
    );
    expect(kept).toEqual({ first: '101', last: '1100' });
    // The replica knew the log up to `top` (< 101): what it remembered may be stale, so it reads again.
    await write(a, 4, [[id, 'PASSED']]);
    expect(a.reads).toHaveLength(2);
    await write(a, 5, [[id, 'PASSED']]);
    expect(a.reads).toHaveLength(2);
  });
});
