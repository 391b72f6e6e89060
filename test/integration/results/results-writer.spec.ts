import { randomUUID } from 'node:crypto';
import { DataSource, type EntityManager } from 'typeorm';
import { isDeadlock, isLockTimeout } from '../../../src/common/db-errors.js';
import { dataSourceOptions } from '../../../src/database/data-source-options.js';
import { ResultEntity, RunEntity, TestCaseEntity } from '../../../src/results/entities.js';
import { ResultsWriter, type RunWriter, testIdentity } from '../../../src/results/results.writer.js';
import { ResultsObservers, type TestOutcome } from '../../../src/results/results-observers.js';
import type { ResultInput } from '../../../src/results/result-input.js';
import { RetentionRepository } from '../../../src/retention/retention.repository.js';
import { createTestDatabase, TestDatabase } from '../../support/database.js';
import { ResultsWithoutIdIndex1764640000000 } from '../../../migrations/1764640000000-ResultsWithoutIdIndex.js';
import { OutcomeIndexes1795723200000 } from '../../../migrations/1795723200000-OutcomeIndexes.js';
import { TestCaseIdentityFirst1795850000000 } from '../../../migrations/1795850000000-TestCaseIdentityFirst.js';

describe(ResultsWriter.name, () => {
  let database: TestDatabase;
  let db: DataSource;
  const sut = new ResultsWriter(new ResultsObservers());
  let projectId: string;

  beforeAll(async () => {
    database = await createTestDatabase();
    db = await new DataSource(dataSourceOptions(database.url, 4)).initialize();
    const [{ id }] = await db.query(`INSERT INTO projects (key, name) VALUES ('WR', 'writer') RETURNING id`);
    projectId = String(id);
  });
  afterAll(async () => {
    await db.destroy();
    await database.drop();
  });

  const newRun = async () =>
    db.getRepository(RunEntity).save({ projectId, name: 'r', startedAt: new Date(), attributes: {} });

  it('returns ids in input order and keeps counts', async () => {
    const run = await newRun();
    const items = Array.from({ length: 300 }, (_, i) => ({
      name: `t${i}`,
      suite: 's',
      status: i % 3 ? ('PASSED' as const) : ('SKIPPED' as const),
    }));
    const outcome = await db.transaction((tx) => sut.write(tx, run, items));
    const rows = await db.getRepository(ResultEntity).findBy({ runId: run.id });
    const nameOf = new Map(rows.map((r) => [r.id, r.name]));
    expect(outcome.ids.map((id) => nameOf.get(id!))).toEqual(items.map((i) => i.name));
    expect(outcome.counts).toEqual({
      total: 300,
      passed: 200,
      failed: 0,
      broken: 0,
      skipped: 100,
      passedOnRetry: 0,
      attempts: 300,
    });
  });

  it('says whether the run was finished as of its counts: a finish that committed while the batch was written', async () => {
    const items: ResultInput[] = [{ name: 'late', suite: 's', status: 'FAILED' }];
    const open = await newRun();
    expect((await db.transaction((tx) => sut.write(tx, open, items))).runFinished).toBe(false);

    // A finish holding the run's row: the batch, which read the run before it, waits at its counts for that commit.
    const run = await newRun();
    const finish = await holdOpen(
      db,
      (tx) => tx.query(`UPDATE runs SET status = 'FINISHED' WHERE id = $1`, [run.id]),
      async () => undefined,
    );
    const writing = db.transaction((tx) => sut.write(tx, run, items));
    await waitingOnLock(db, 'UPDATE runs SET count_total%');
    finish.release();
    await finish.done;
    expect((await writing).runFinished).toBe(true);
  });

  it('takes result ids in blocks of 100: one nextval() a block, unique and rising in input order', async () => {
    const [{ increment }] = await db.query(
      `SELECT seqincrement AS increment FROM pg_sequence WHERE seqrelid = 'results_id_seq'::regclass`,
    );
    expect(Number(increment)).toBe(100);
    const [a, b] = [await newRun(), await newRun()];
    const items = (tag: string, n: number) =>
      Array.from({ length: n }, (_, i) => ({
        name: `${tag}${i}`,
        suite: 'blocks',
        status: 'PASSED' as const,
      }));
    // Two writers at once, needing 15 blocks (1500 rows) and 25 (2500): no id shared.
    const [one, two] = await Promise.all([
      db.transaction((tx) => sut.write(tx, a, items('a', 1500))),
      db.transaction((tx) => sut.write(tx, b, items('b', 2500))),
    ]);
    for (const [outcome, blocks] of [
      [one, 15],
      [two, 25],
    ] as const) {
      const ids = outcome.ids.map((id) => BigInt(id!));
      expect(ids.every((id, i) => i === 0 || id > ids[i - 1])).toBe(true);
      // Consecutive within a block: a gap only where the next block begins.
      expect(ids.filter((id, i) => i > 0 && id !== ids[i - 1] + 1n).length).toBeLessThanOrEqual(blocks - 1);
    }
    const all = [...one.ids, ...two.ids];
    expect(new Set(all).size).toBe(4000);
    const stored: { id: string; name: string }[] = await db.query(
      'SELECT id, name FROM results WHERE run_id = ANY($1::bigint[])',
      [[a.id, b.id]],
    );
    const nameOf = new Map(stored.map((r) => [String(r.id), r.name]));
    expect(one.ids.map((id) => nameOf.get(id!))).toEqual(items('a', 1500).map((i) => i.name));
    expect(two.ids.map((id) => nameOf.get(id!))).toEqual(items('b', 2500).map((i) => i.name));
  });

  it('skips UUIDs already stored, and repeats within one batch, without counting them', async () => {
    const run = await newRun();
    const u1 = randomUUID();
    const u2 = randomUUID();
    await db.transaction((tx) => sut.write(tx, run, [{ uuid: u1, name: 'a', status: 'PASSED' }]));
    const outcome = await db.transaction((tx) =>
      sut.write(tx, run, [
        { uuid: u1, name: 'a', status: 'PASSED' },
        { uuid: u2, name: 'b', status: 'FAILED' },
        { uuid: u2.toUpperCase(), name: 'b', status: 'FAILED' },
        { name: 'no uuid', status: 'BROKEN' },
      ]),
    );
    expect(outcome.ids[0]).toBeNull();
    expect(outcome.ids[1]).not.toBeNull();
    expect(outcome.ids[2]).toBeNull();
    expect(outcome.ids[3]).not.toBeNull();
    expect(outcome.counts).toEqual({
      total: 3,
      passed: 1,
      failed: 1,
      broken: 1,
      skipped: 0,
      passedOnRetry: 0,
      attempts: 3,
    });
  });

  it('gives a test one identity across runs: suite + name, or the explicit testId', async () => {
    const first = await newRun();
    const second = await newRun();
    await db.transaction((tx) =>
      sut.write(tx, first, [
        { name: 'same', suite: 'S', status: 'PASSED' },
        { testId: 'ID-9', name: 'old', status: 'PASSED' },
      ]),
    );
    await db.transaction((tx) =>
      sut.write(tx, second, [
        { name: 'same', suite: 'S', status: 'FAILED' },
        { testId: 'ID-9', name: 'renamed', status: 'FAILED' },
      ]),
    );
    const cases = await db.getRepository(TestCaseEntity).findBy({ projectId });
    const same = cases.filter((c) => c.identity === testIdentity({ name: 'same', suite: 'S' }));
    expect(same).toHaveLength(1);
    const history = await db
      .getRepository(ResultEntity)
      .find({ where: { testId: same[0].id }, order: { id: 'ASC' } });
    expect(history.map((r) => [r.runId, r.status])).toEqual([
      [first.id, 'PASSED'],
      [second.id, 'FAILED'],
    ]);
    const byId = cases.filter((c) => c.externalId === 'ID-9');
    expect(byId).toHaveLength(1);
    expect(byId[0].name).toBe('renamed');
  });

  it('rolls back with the caller: nothing of a failed transaction stays', async () => {
    const run = await newRun();
    await expect(
      db.transaction(async (tx) => {
        await sut.write(tx, run, [{ name: 'gone', status: 'PASSED' }]);
        throw new Error('later step failed');
      }),
    ).rejects.toThrow('later step failed');
    expect(await db.getRepository(ResultEntity).countBy({ runId: run.id })).toBe(0);
    expect((await db.getRepository(RunEntity).findOneByOrFail({ id: run.id })).countTotal).toBe(0);
  });

  it('does not remember test cases of a transaction that rolled back', async () => {
    const run = await newRun();
    const items = [{ name: 'born in a rollback', suite: 'RB', status: 'PASSED' as const }];
    await expect(
      db.transaction(async (tx) => {
        await sut.write(tx, run, items);
        throw new Error('later step failed');
      }),
    ).rejects.toThrow('later step failed');
    // The test case created in the rolled-back transaction is gone: the next writes must create it again
    // (and then, remembered after commit, find it without a lookup).
    for (let i = 0; i < 2; i++) {
      const outcome = await db.transaction((tx) => sut.write(tx, run, items));
      sut.remember([outcome]);
      const [stored] = await db.query('SELECT test_id FROM results WHERE id = $1', [outcome.ids[0]]);
      const test = await db.getRepository(TestCaseEntity).findOneBy({ id: String(stored.test_id) });
      expect(test).toEqual(expect.objectContaining({ name: 'born in a rollback', suite: 'RB' }));
    }
  });

  it('gives two concurrent writers of the same new test one test case', async () => {
    const [first, second] = [await newRun(), await newRun()];
    const items = [{ name: 'born twice', suite: 'Race', status: 'PASSED' as const }];
    const one = await holdOpen(
      db,
      (tx) => sut.write(tx, first, items),
      async () => undefined,
    );
    // The second writer does not see the first one's test case yet, and waits on it at the unique index.
    const two = db.transaction((tx) => sut.write(tx, second, items));
    await waitingOnLock(db, 'INSERT INTO test_cases%');
    one.release();
    await one.done;
    await two;
    const cases = await db.getRepository(TestCaseEntity).findBy({ projectId, name: 'born twice' });
    expect(cases).toHaveLength(1);
    const rows: { run_id: string; test_id: string }[] = await db.query(
      'SELECT run_id, test_id FROM results WHERE run_id = ANY($1::bigint[]) ORDER BY run_id',
      [[first.id, second.id]],
    );
    expect(rows.map((r) => [String(r.run_id), String(r.test_id)])).toEqual([
      [first.id, cases[0].id],
      [second.id, cases[0].id],
    ]);
  });

  it('gives two concurrent writers of many of the same new tests, in other orders, one test case each, without error', async () => {
    const runs = await Promise.all([newRun(), newRun(), newRun()]);
    const names = Array.from({ length: 400 }, (_, i) => `crowd ${i}`);
    const itemsOf = (order: string[]) =>
      order.map((name) => ({ name, suite: 'Crowd', status: 'PASSED' as const }));
    // Three transactions at once, the same new tests in three orders, one of them a whole run written in batches.
    const outcomes = await Promise.all([
      db.transaction((tx) => sut.write(tx, runs[0], itemsOf(names))),
      db.transaction((tx) => sut.write(tx, runs[1], itemsOf([...names].reverse()))),
      db.transaction(async (tx) => {
        const writer = sut.openRun(tx, runs[2], 0);
        const shuffled = names.filter((_, i) => i % 2).concat(names.filter((_, i) => i % 2 === 0));
        for (let i = 0; i < shuffled.length; i += 100) {
          await writer.add(itemsOf(shuffled.slice(i, i + 100)));
        }
        return writer.finish();
      }),
    ]);
    expect(outcomes.map((o) => o.counts.total)).toEqual([400, 400, 400]);
    const cases: { id: string; name: string }[] = await db.query(
      `SELECT id, name FROM test_cases WHERE project_id = $1 AND suite = 'Crowd'`,
      [projectId],
    );
    expect(cases).toHaveLength(400);
    const caseOf = new Map(cases.map((c) => [c.name, String(c.id)]));
    const rows: { run_id: string; test_id: string; name: string }[] = await db.query(
      'SELECT run_id, test_id, name FROM results WHERE run_id = ANY($1::bigint[])',
      [runs.map((r) => r.id)],
    );
    expect(rows).toHaveLength(1200);
    expect(rows.every((r) => String(r.test_id) === caseOf.get(r.name))).toBe(true);
    // The whole run holds its earlier batches' new tests while the others wait for them, holding tests its next
    // batches need: the writers of one batch step back (see the next test), or a deadlock is found.
  }, 30_000);

  it('lets a run written in batches go on when a writer of one batch waits for its first batch holding tests its next batch needs', async () => {
    const [single, whole] = [await newRun(), await newRun()];
    const itemsOf = (order: string[]) =>
      order.map((name) => ({ name, suite: 'Cycle', status: 'PASSED' as const }));
    // New tests are inserted in identity order: the writer of one batch holds every test but the last when it comes
    // to wait for the last, which the whole run's first batch inserted; the whole run's second batch is the others.
    const names = Array.from({ length: 50 }, (_, i) => `cycle ${i}`).sort((a, b) =>
      testIdentity({ name: a, suite: 'Cycle' }) < testIdentity({ name: b, suite: 'Cycle' }) ? -1 : 1,
    );
    const [deadlockTimeout] = await db.query(
      `SELECT setting::int AS ms FROM pg_settings WHERE name = 'deadlock_timeout'`,
    );
    let writer!: RunWriter;
    const wholeRun = await holdOpen(
      db,
      (tx) => (writer = sut.openRun(tx, whole, 0)).add(itemsOf(names.slice(-1))),
      async () => {
        await writer.add(itemsOf(names.slice(0, -1)));
        return writer.finish();
      },
    );
    const oneBatch = db.transaction(async (tx) => {
      const outcome = await sut.write(tx, single, itemsOf(names));
      // Its wait was limited for the insert only.
      expect(await tx.query('SHOW lock_timeout')).toEqual([{ lock_timeout: '0' }]);
      return outcome;
    });
    await waitingOnLock(db, 'INSERT INTO test_cases%');
    // PostgreSQL looks for a deadlock once a wait, deadlock_timeout after it began: the one-batch writer's look is
    // over, and finds none, before the whole run waits for it. Then only the whole run's own look finds the cycle,
    // each time it tries again, unless the one-batch writer steps back by itself.
    await new Promise((resolve) => setTimeout(resolve, deadlockTimeout.ms + 300));
    wholeRun.release();
    const outcomes = await Promise.all([oneBatch, wholeRun.done]);
    expect(outcomes.map((o) => o.counts.total)).toEqual([50, 50]);
    const cases: { id: string }[] = await db.query(
      `SELECT id FROM test_cases WHERE project_id = $1 AND suite = 'Cycle'`,
      [projectId],
    );
    expect(cases).toHaveLength(50);
    const [{ tests }] = await db.query(
      'SELECT count(DISTINCT test_id)::int AS tests FROM results WHERE run_id = ANY($1::bigint[])',
      [[single.id, whole.id]],
    );
    expect(tests).toBe(50);
  }, 30_000);

  it('steps back for no longer in all than the statement timeout, then fails with a lock timeout', async () => {
    const [single, whole] = [await newRun(), await newRun()];
    const items = [{ name: 'held long', suite: 'Long', status: 'PASSED' as const }];
    let writer!: RunWriter;
    const wholeRun = await holdOpen(
      db,
      (tx) => (writer = sut.openRun(tx, whole, 0)).add(items),
      () => writer.finish(),
    );
    const started = Date.now();
    const waited = db.transaction(async (tx) => {
      await tx.query('SET LOCAL statement_timeout = 700');
      return sut.write(tx, single, items);
    });
    expect(isLockTimeout(await waited.catch((error: unknown) => error))).toBe(true);
    // Several steps back (200 ms each), then no more once 700 ms had gone.
    expect(Date.now() - started).toBeGreaterThanOrEqual(700);
    expect(Date.now() - started).toBeLessThan(3000);
    wholeRun.release();
    expect((await wholeRun.done).counts.total).toBe(1);
  });

  it('does not step back in a transaction holding test cases it wrote: two that need each other’s deadlock, one fails', async () => {
    const runs = await Promise.all([newRun(), newRun(), newRun(), newRun()]);
    const itemsOf = (name: string) => [{ name, suite: 'Held', status: 'PASSED' as const }];
    let arrived = 0;
    let bothHold!: () => void;
    const holding = new Promise<void>((resolve) => (bothHold = resolve));
    // As a V2 delivery of two runs: one write holding its new test, then one needing the other transaction's.
    const deliver = (first: RunEntity, second: RunEntity, mine: string, theirs: string) =>
      db.transaction(async (tx) => {
        // Longer than a writer of one batch waits before it steps back: stepping back, the two would never meet.
        await tx.query('SET LOCAL deadlock_timeout = 300');
        await sut.write(tx, first, itemsOf(mine));
        if (++arrived === 2) {
          bothHold();
        }
        await holding;
        return sut.write(tx, second, itemsOf(theirs));
      });
    const outcomes = await Promise.allSettled([
      deliver(runs[0], runs[1], 'p', 'q'),
      deliver(runs[2], runs[3], 'q', 'p'),
    ]);
    expect(outcomes.map((o) => o.status).sort()).toEqual(['fulfilled', 'rejected']);
    const failed = outcomes.find((o): o is PromiseRejectedResult => o.status === 'rejected')!;
    expect(isDeadlock(failed.reason)).toBe(true);
    const names: { name: string }[] = await db.query(
      `SELECT name FROM test_cases WHERE project_id = $1 AND suite = 'Held' ORDER BY name`,
      [projectId],
    );
    expect(names).toEqual([{ name: 'p' }, { name: 'q' }]);
  }, 30_000);

  it('stores a batch mixing new and known tests: known ones keep their test case, new ones get one each', async () => {
    const [first, second] = [await newRun(), await newRun()];
    const known = ['k1', 'k2', 'k3'].map((name) => ({ name, suite: 'Mix', status: 'PASSED' as const }));
    const outcome = await db.transaction((tx) => sut.write(tx, first, known));
    // k1 and k2 remembered (the cache), k3 not (a lookup): a new writer knows none of them.
    sut.remember([{ learned: outcome.learned.slice(0, 2) }]);
    const before: { id: string; name: string }[] = await db.query(
      `SELECT id, name FROM test_cases WHERE project_id = $1 AND suite = 'Mix'`,
      [projectId],
    );
    const mixed = [
      { name: 'n1', suite: 'Mix', status: 'FAILED' as const },
      known[0],
      { name: 'n2', suite: 'Mix', status: 'PASSED' as const },
      known[2],
      { name: 'n1', suite: 'Mix', status: 'PASSED' as const, retry: 1 },
      known[1],
    ];
    for (const writer of [sut, new ResultsWriter(new ResultsObservers())]) {
      const run = writer === sut ? second : await newRun();
      const written = await db.transaction((tx) =>
        writer.write(
          tx,
          run,
          mixed.map((r) => ({ ...r })),
        ),
      );
      expect(written.counts).toEqual(expect.objectContaining({ total: 5, attempts: 6 }));
    }
    const after: { id: string; name: string }[] = await db.query(
      `SELECT id, name FROM test_cases WHERE project_id = $1 AND suite = 'Mix' ORDER BY name`,
      [projectId],
    );
    expect(after.map((c) => c.name)).toEqual(['k1', 'k2', 'k3', 'n1', 'n2']);
    const idOf = new Map(after.map((c) => [c.name, String(c.id)]));
    for (const c of before) {
      expect(idOf.get(c.name)).toBe(String(c.id));
    }
    const rows: { name: string; test_id: string }[] = await db.query(
      'SELECT name, test_id FROM results WHERE run_id = $1 ORDER BY id',
      [second.id],
    );
    expect(rows.map((r) => [r.name, String(r.test_id)])).toEqual(
      mixed.map((r) => [r.name, idOf.get(r.name)]),
    );
  });

  describe('in a project whose tests lately were all new', () => {
    const LOOKUP = 'CROSS JOIN LATERAL (SELECT id, identity, suite, name FROM test_cases';
    let project: string;
    const newProject = async () => {
      const [{ id }] = await db.query(
        `INSERT INTO projects (key, name) VALUES ('NEW' || nextval('runs_id_seq'), 'new tests') RETURNING id`,
      );
      return String(id);
    };
    beforeEach(async () => {
      project = await newProject();
    });
    /** The test ids the last write told its observers it created. */
    let created: string[] = [];
    const newWriter = () => {
      const observers = new ResultsObservers();
      observers.register({
        outcomesSettled: async (_tx, _run, outcomes) => {
          created.push(...[...outcomes].filter((o) => o.created).map((o) => o.testId));
        },
      });
      return new ResultsWriter(observers);
    };
    const runOf = (projectId = project, name = 'r') =>
      db.getRepository(RunEntity).save({ projectId, name, startedAt: new Date(), attributes: {} });
    /** Records in `steps` each lookup and each INSERT of test cases that `tx` sends. */
    const recordSteps = (tx: EntityManager, steps: string[]) => {
      const query = tx.query.bind(tx);
      tx.query = ((sql: string, params?: unknown[]) => {
        if (sql.includes(LOOKUP) || sql.includes('INSERT INTO test_cases')) {
          steps.push(sql.includes(LOOKUP) ? 'lookup' : 'insert');
        }
        return query(sql, params);
      }) as typeof tx.query;
    };
    /** Writes `items` with `writer` in a run of its own (of `project`); what it sent, stored and created. */
    const written = async (writer: ResultsWriter, items: ResultInput[], projectId = project) => {
      const steps: string[] = [];
      created = [];
      const run = await runOf(projectId);
      await db.transaction((tx) => {
        recordSteps(tx, steps);
        return writer.write(tx, run, items);
      });
      const rows: { name: string; test_id: string }[] = await db.query(
        'SELECT name, test_id FROM results WHERE run_id = $1 ORDER BY id',
        [run.id],
      );
      const testOf = new Map(rows.map((r) => [r.name, String(r.test_id)]));
      return {
        steps,
        testOf,
        created: [...testOf].filter(([, id]) => created.includes(id)).map(([name]) => name),
      };
    };
    const tests = (tag: string, n: number) =>
      Array.from({ length: n }, (_, i) => ({ name: `${tag}${i}`, suite: 'New', status: 'PASSED' as const }));
    const names = (tag: string, n: number) => tests(tag, n).map((t) => t.name);
    const casesOf = async (projectId = project) =>
      new Map<string, string>(
        (await db.query('SELECT name, id FROM test_cases WHERE project_id = $1', [projectId])).map(
          (r: { name: string; id: string }) => [r.name, String(r.id)],
        ),
      );

    it('inserts 100 or more tests not in the cache without looking them up first, once a lookup of as many found none', async () => {
      const writer = newWriter();
      expect((await written(writer, tests('a', 120))).steps).toEqual(['lookup', 'insert']);
      const second = await written(writer, tests('b', 120));
      expect(second.steps).toEqual(['insert']);
      expect(second.created).toEqual(names('b', 120));
      const cases = await casesOf();
      expect(cases.size).toBe(240);
      expect([...second.testOf]).toEqual(names('b', 120).map((name) => [name, cases.get(name)]));
      // The guess is the project's: this writer looks another project's tests up first.
      expect((await written(writer, tests('c', 120), await newProject())).steps).toEqual([
        'lookup',
        'insert',
      ]);
      // Fewer than 100 tests are looked up, and do not end the guess.
      expect((await written(writer, tests('d', 99))).steps).toEqual(['lookup', 'insert']);
      expect((await written(writer, tests('e', 100))).steps).toEqual(['insert']);
    });

    it('does not guess from, nor for, tests with an explicit testId (never cached: most often stored)', async () => {
      const writer = newWriter();
      const withIds = (tag: string) => tests(tag, 120).map((t) => ({ ...t, testId: `id-${t.name}` }));
      expect((await written(writer, withIds('a'))).steps).toEqual(['lookup', 'insert']);
      expect((await written(writer, withIds('a'))).steps).toEqual(['lookup']);
      expect((await written(writer, tests('b', 120))).steps).toEqual(['lookup', 'insert']);
      expect((await written(writer, withIds('a'))).steps).toEqual(['lookup']);
    });

    it('gets a wrong guess right (tests another writer stored): their test cases, new ones for the rest, created only those, then looks up again', async () => {
      const one = newWriter();
      const other = newWriter();
      // Another replica stores tests k0..k99; this one has seen only new tests.
      await written(other, tests('k', 100));
      const stored = await casesOf();
      await written(one, tests('a', 120));
      const guessed = await written(one, [...tests('n', 20), ...tests('k', 100)]);
      // The plain INSERT failed at the first stored test; the one with ON CONFLICT DO NOTHING stored the new ones.
      expect(guessed.steps).toEqual(['insert', 'insert', 'lookup']);
      expect(guessed.created).toEqual(names('n', 20));
      const after = await casesOf();
      expect(after.size).toBe(100 + 120 + 20);
      for (const name of names('k', 100)) {
        expect(guessed.testOf.get(name)).toBe(stored.get(name));
      }
      for (const name of names('n', 20)) {
        expect(guessed.testOf.get(name)).toBe(after.get(name));
      }
      // The guess is over: the next tests not in the cache are looked up first.
      expect((await written(one, tests('m', 120))).steps).toEqual(['lookup', 'insert']);
    });

    it('does not wait for a transaction renaming a stored test (tests with an explicit testId are never guessed)', async () => {
      const writer = newWriter();
      const renaming = newWriter();
      await written(renaming, [{ name: 'x', suite: 'New', status: 'PASSED', testId: 'id-x' }]);
      await written(writer, tests('a', 120));
      const runner = db.createQueryRunner();
      await runner.connect();
      try {
        await runner.startTransaction();
        const run = await runOf(project, 'rename');
        // The rename holds the stored test case's row until this transaction ends.
        await renaming.write(runner.manager, run, [
          { name: 'x renamed', suite: 'New', status: 'PASSED', testId: 'id-x' },
        ]);
        // New tests and that one under its old name, meanwhile: looked up (an INSERT of its identity would wait for the
        // rename, and hang here until the test times out), and the new ones inserted; new tests alone are guessed.
        const withStored = [
          ...tests('b', 119),
          { name: 'x', suite: 'New', status: 'PASSED' as const, testId: 'id-x' },
        ];
        expect((await written(writer, withStored)).steps).toEqual(['lookup', 'insert']);
        expect((await written(writer, tests('c', 120))).steps).toEqual(['insert']);
        await runner.commitTransaction();
      } finally {
        if (runner.isTransactionActive) {
          await runner.rollbackTransaction();
        }
        await runner.release();
      }
      expect((await casesOf()).get('x renamed')).toBeDefined();
    }, 15_000);

    it('guesses in a transaction that holds test cases too (an import after its first batch)', async () => {
      const writer = newWriter();
      await written(writer, tests('a', 120));
      const run = await runOf(project, 'import');
      const sent: string[] = [];
      await db.transaction(async (tx) => {
        recordSteps(tx, sent);
        const whole = writer.openRun(tx, run, 0);
        await whole.add(tests('b', 120));
        await whole.add(tests('c', 120));
        await whole.finish();
      });
      expect(sent).toEqual(['insert', 'insert']);
    });
  });

  it('names a test by its exact text: names that differ only in case or Unicode normalisation are other tests', async () => {
    const run = await newRun();
    // Today's rule (README, "Test identity"): suite + name as sent, less invisible format characters (Unicode Cf);
    // no case folding, no normalisation. So these are four tests, and a fifth name that differs from the first
    // only by a zero-width space (Cf) is the first test again.
    const nfc = 'caf\u00e9 opens';
    const nfd = 'cafe\u0301 opens';
    expect(nfc.normalize('NFC')).toBe(nfd.normalize('NFC'));
    const items = [
      { name: 'Logs in', suite: 'Norm', status: 'PASSED' as const },
      { name: 'logs in', suite: 'Norm', status: 'PASSED' as const },
      { name: nfc, suite: 'Norm', status: 'PASSED' as const },
      { name: nfd, suite: 'Norm', status: 'PASSED' as const },
      { name: 'Logs\u200b in', suite: 'Norm', status: 'FAILED' as const, retry: 1 },
    ];
    const outcome = await db.transaction((tx) => sut.write(tx, run, items));
    expect(outcome.counts).toEqual(expect.objectContaining({ total: 4, attempts: 5 }));
    const cases: { id: string; name: string }[] = await db.query(
      `SELECT id, name FROM test_cases WHERE project_id = $1 AND suite = 'Norm' ORDER BY id`,
      [projectId],
    );
    expect(cases.map((c) => c.name).sort()).toEqual(['Logs in', 'logs in', nfc, nfd].sort());
    const rows: { name: string; test_id: string }[] = await db.query(
      'SELECT name, test_id FROM results WHERE run_id = $1 ORDER BY id',
      [run.id],
    );
    const idOf = new Map(cases.map((c) => [c.name, String(c.id)]));
    expect(rows.map((r) => String(r.test_id))).toEqual(
      ['Logs in', 'logs in', nfc, nfd, 'Logs in'].map((n) => idOf.get(n)),
    );
  });

  it('leaves no test case behind when a batch fails after creating its new tests, in one write or a whole run', async () => {
    const run = await newRun();
    // The results' COPY fails (PostgreSQL refuses a NUL byte in text) after the batch's new test cases were inserted.
    await expect(
      db.transaction((tx) =>
        sut.write(tx, run, [
          { name: 'orphan a', suite: 'Orphans', status: 'PASSED' },
          { name: 'orphan b', suite: 'Orphans', status: 'FAILED', message: 'nul \u0000 here' },
        ]),
      ),
    ).rejects.toThrow(/0x00/);
    await expect(
      db.transaction(async (tx) => {
        const writer = sut.openRun(tx, run, 10);
        try {
          await writer.add([{ name: 'orphan c', suite: 'Orphans', status: 'PASSED' }]);
          await writer.add([{ name: 'orphan d', suite: 'Orphans', status: 'PASSED', message: '\u0000' }]);
          await writer.add([{ name: 'orphan e', suite: 'Orphans', status: 'PASSED' }]);
          await writer.finish();
        } catch (error) {
          await writer.settled();
          throw error;
        }
      }),
    ).rejects.toThrow(/0x00/);
    expect(
      await db.query(`SELECT name FROM test_cases WHERE project_id = $1 AND suite = 'Orphans'`, [projectId]),
    ).toEqual([]);
    expect(await db.getRepository(ResultEntity).countBy({ runId: run.id })).toBe(0);
    // Nor in the writer's cache: the same tests are created again, and stored.
    const outcome = await db.transaction((tx) =>
      sut.write(tx, run, [{ name: 'orphan a', suite: 'Orphans', status: 'PASSED' }]),
    );
    sut.remember([outcome]);
    expect(
      await db.query(`SELECT name FROM test_cases WHERE project_id = $1 AND suite = 'Orphans'`, [projectId]),
    ).toEqual([{ name: 'orphan a' }]);
  });

  describe('openRun: a whole run, batch after batch in one transaction', () => {
    const batchOf = (from: number, to: number) =>
      Array.from({ length: to - from }, (_, i) => ({
        name: `pipe${from + i}`,
        suite: 'Pipeline',
        status: (from + i) % 4 ? ('PASSED' as const) : ('FAILED' as const),
        message: `m${from + i}`,
      }));

    it('stores every batch in order, new tests and known ones, while the next batches are added', async () => {
      const run = await newRun();
      // Batches of new tests and batches repeating earlier ones (cached in the writer only after a commit:
      // looked up, or created, within the transaction), each added while the COPY before it may still run.
      const batches = [
        batchOf(0, 300),
        batchOf(300, 600),
        batchOf(0, 300),
        batchOf(600, 900),
        batchOf(300, 600),
      ];
      const { counts, added } = await db.transaction(async (tx) => {
        const writer = sut.openRun(tx, run, 10_000);
        const added = [];
        for (const batch of batches) {
          added.push(await writer.add(batch));
        }
        return { ...(await writer.finish()), added };
      });
      // A test met again in the run is another attempt of it: counted once, by its last attempt.
      expect(added.map((c) => [c.total, c.attempts])).toEqual([
        [300, 300],
        [600, 600],
        [600, 900],
        [900, 1200],
        [900, 1500],
      ]);
      expect(counts).toEqual({
        total: 900,
        passed: 675,
        failed: 225,
        broken: 0,
        skipped: 0,
        passedOnRetry: 0,
        attempts: 1500,
      });
      const stored: { id: string; name: string; message: string; test_id: string }[] = await db.query(
        'SELECT id, name, message, test_id FROM results WHERE run_id = $1 ORDER BY id',
        [run.id],
      );
      expect(stored.map((r) => r.name)).toEqual(batches.flat().map((r) => r.name));
      expect(stored.map((r) => r.message)).toEqual(batches.flat().map((r) => r.message));
      const cases = await db.getRepository(TestCaseEntity).findBy({ projectId, suite: 'Pipeline' });
      expect(cases).toHaveLength(900);
      const caseOf = new Map(cases.map((c) => [c.name, c.id]));
      expect(stored.every((r) => String(r.test_id) === caseOf.get(r.name))).toBe(true);
      const row = await db.getRepository(RunEntity).findOneByOrFail({ id: run.id });
      expect([row.countTotal, row.countPassed, row.countFailed, row.countAttempts]).toEqual([
        900, 675, 225, 1500,
      ]);
    });

    it('fails the run when a COPY fails, storing nothing, and settles before the rollback', async () => {
      const run = await newRun();
      let settled = false;
      await expect(
        db.transaction(async (tx) => {
          const writer = sut.openRun(tx, run, 10);
          try {
            // PostgreSQL refuses a NUL byte in text: the COPY of this batch fails after add has returned.
            await writer.add([
              { name: 'fine', suite: 'Broken', status: 'PASSED', message: 'nul \u0000 here' },
            ]);
            await writer.add(batchOf(1000, 1010));
            await writer.add(batchOf(1010, 1020));
            await writer.finish();
          } catch (error) {
            await writer.settled();
            settled = true;
            throw error;
          }
        }),
      ).rejects.toThrow(/0x00/);
      expect(settled).toBe(true);
      expect(await db.getRepository(ResultEntity).countBy({ runId: run.id })).toBe(0);
    });

    it('needs no connection but its own: as many whole runs as the pool has connections go through at once', async () => {
      // The pool has 4 connections (beforeAll): 4 imports hold them all. Ids taken on a second, pooled connection
      // would leave each waiting for a fifth until the pool's timeout.
      const runs = await Promise.all(Array.from({ length: 4 }, () => newRun()));
      const outcomes = await Promise.all(
        runs.map((run, r) =>
          db.transaction(async (tx) => {
            const writer = sut.openRun(tx, run, 0);
            for (let b = 0; b < 3; b++) {
              await writer.add(batchOf(5000 + r * 1000 + b * 300, 5000 + r * 1000 + (b + 1) * 300));
            }
            return writer.finish();
          }),
        ),
      );
      expect(outcomes.map((o) => o.counts.total)).toEqual([900, 900, 900, 900]);
    });

    it('takes results without UUIDs only', async () => {
      const run = await newRun();
      await expect(
        db.transaction((tx) =>
          sut.openRun(tx, run, 10).add([{ uuid: randomUUID(), name: 'u', status: 'PASSED' }]),
        ),
      ).rejects.toThrow('without UUIDs');
    });
  });

  describe('observers (derived state in the batch transaction)', () => {
    const observers = new ResultsObservers();
    const observed = new ResultsWriter(observers);
    const seen: { stored: { name: string; testId: string; id: string }[][]; outcomes: TestOutcome[][] } = {
      stored: [],
      outcomes: [],
    };
    beforeAll(async () => {
      await db.query('CREATE TABLE observed (run_id bigint, n int)');
      observers.register({
        resultsStored: (run, batch) => {
          const names = batch.map((r) => ({ name: r.input.name, testId: r.testId, id: r.id }));
          return async (tx) => {
            // Runs after the batch's results are stored, on the batch's transaction.
            const [{ n }] = await tx.query('SELECT count(*)::int AS n FROM results WHERE run_id = $1', [
              run.id,
            ]);
            await tx.query('INSERT INTO observed VALUES ($1, $2)', [run.id, n]);
            seen.stored.push(names);
          };
        },
        outcomesSettled: async (_tx, _run, outcomes) => {
          seen.outcomes.push([...outcomes].sort((a, b) => Number(a.testId) - Number(b.testId)));
        },
      });
    });
    beforeEach(() => {
      seen.stored = [];
      seen.outcomes = [];
    });
    const statusById = (outcomes: TestOutcome[], ids: Map<string, string>) =>
      Object.fromEntries(outcomes.map((o) => [ids.get(o.testId), [o.status, o.otherStatuses]]));
    const testNames = async (runId: string) =>
      new Map<string, string>(
        (await db.query('SELECT DISTINCT test_id, name FROM results WHERE run_id = $1', [runId])).map(
          (r: { test_id: string; name: string }) => [String(r.test_id), r.name],
        ),
      );

    it('gives each batch to the observers once stored, and each test once with its outcome (attempts weighed, also against stored ones)', async () => {
      const run = await newRun();
      await db.transaction((tx) =>
        observed.write(tx, run, [
          { name: 'a', status: 'FAILED' },
          { name: 'a', status: 'PASSED', retry: 1 },
          { name: 'b', status: 'BROKEN' },
        ]),
      );
      // A late attempt of b (stored outcome weighed) and an earlier one of a, which stays PASSED.
      await db.transaction((tx) =>
        observed.write(tx, run, [
          { name: 'b', status: 'PASSED', retry: 1 },
          { name: 'a', status: 'FAILED', retry: 0 },
        ]),
      );
      expect(seen.stored.map((b) => b.map((r) => r.name))).toEqual([
        ['a', 'a', 'b'],
        ['b', 'a'],
      ]);
      const [{ rows }] = await db.query(
        'SELECT array_agg(n ORDER BY n) AS rows FROM observed WHERE run_id = $1',
        [run.id],
      );
      expect(rows).toEqual([3, 5]);
      const names = await testNames(run.id);
      expect(seen.outcomes.map((o) => statusById(o, names))).toEqual([
        { a: ['PASSED', 2], b: ['BROKEN', 0] },
        { a: ['PASSED', 2], b: ['PASSED', 4] },
      ]);
    });

    it('tells the observers which tests the write created (a test the project had never seen), in a batch and a whole run', async () => {
      const first = await newRun();
      await db.transaction((tx) =>
        observed.write(tx, first, [{ name: 'old', suite: 'Created', status: 'PASSED' }]),
      );
      const run = await newRun();
      await db.transaction((tx) =>
        observed.write(tx, run, [
          { name: 'old', suite: 'Created', status: 'PASSED' },
          { name: 'fresh', suite: 'Created', status: 'PASSED' },
        ]),
      );
      const whole = await newRun();
      await db.transaction(async (tx) => {
        const writer = observed.openRun(tx, whole, 0);
        await writer.add([
          { name: 'old', suite: 'Created', status: 'PASSED' },
          { name: 'fresher', suite: 'Created', status: 'FAILED' },
        ]);
        await writer.add([
          { name: 'fresher', suite: 'Created', status: 'PASSED', retry: 1 },
          { name: 'fresh', suite: 'Created', status: 'PASSED' },
        ]);
        await writer.finish();
      });
      const createdOf = async (runId: string, outcomes: TestOutcome[]) => {
        const names = await testNames(runId);
        return Object.fromEntries(outcomes.map((o) => [names.get(o.testId), o.created === true]));
      };
      expect(await createdOf(first.id, seen.outcomes[0])).toEqual({ old: true });
      expect(await createdOf(run.id, seen.outcomes[1])).toEqual({ old: false, fresh: true });
      expect(await createdOf(whole.id, seen.outcomes[2])).toEqual({
        old: false,
        fresh: false,
        fresher: true,
      });
    });

    it("rolls the observers' writes back with the batch", async () => {
      const run = await newRun();
      await expect(
        db.transaction(async (tx) => {
          await observed.write(tx, run, [{ name: 'x', status: 'PASSED' }]);
          throw new Error('later failure');
        }),
      ).rejects.toThrow('later failure');
      expect(await db.query('SELECT * FROM observed WHERE run_id = $1', [run.id])).toEqual([]);
    });

    it('gives a run written whole each batch after its COPY, and every test once at the finish', async () => {
      const run = await newRun();
      await db.transaction(async (tx) => {
        const writer = observed.openRun(tx, run, 100);
        await writer.add([
          { name: 'p', status: 'PASSED' },
          { name: 'q', status: 'FAILED' },
        ]);
        await writer.add([
          { name: 'q', status: 'PASSED', retry: 1 },
          { name: 's', status: 'SKIPPED' },
        ]);
        await writer.finish();
      });
      expect(seen.stored.map((b) => b.map((r) => r.name))).toEqual([
        ['p', 'q'],
        ['q', 's'],
      ]);
      expect(seen.stored.flat().every((r) => /^\d+$/.test(r.id))).toBe(true);
      const [{ rows }] = await db.query(
        'SELECT array_agg(n ORDER BY n) AS rows FROM observed WHERE run_id = $1',
        [run.id],
      );
      expect(rows).toEqual([2, 4]);
      expect(seen.outcomes).toHaveLength(1);
      expect(statusById(seen.outcomes[0], await testNames(run.id))).toEqual({
        p: ['PASSED', 0],
        q: ['PASSED', 2],
        s: ['SKIPPED', 0],
      });
    });
  });

  it('refuses results for a run that no longer exists, storing nothing', async () => {
    const run = await newRun();
    await db.query('DELETE FROM runs WHERE id = $1', [run.id]);
    await expect(
      db.transaction((tx) =>
        sut.write(tx, run, [
          { name: 'orphan', status: 'PASSED' },
          { uuid: randomUUID(), name: 'orphan 2', status: 'PASSED' },
        ]),
      ),
    ).rejects.toMatchObject({ code: 'NOT_FOUND' });
    expect(await db.getRepository(ResultEntity).countBy({ runId: run.id })).toBe(0);
  });

  it('waits for a concurrent batch before deleting its run, then deletes that batch too', async () => {
    const run = await newRun();
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let written!: () => void;
    const wrote = new Promise<void>((resolve) => (written = resolve));
    const writing = db.transaction(async (tx) => {
      await sut.write(tx, run, [{ name: 'racing', status: 'PASSED' }]);
      written();
      await held;
    });
    await wrote;
    const deleting = db.query('DELETE FROM runs WHERE id = $1', [run.id]);
    // Let the DELETE reach the run's row lock before the batch commits.
    await waitingOnLock(db, 'DELETE FROM runs%');
    release();
    await writing;
    await deleting;
    // The batch's results are queued for the purge with the run (see the Retention migration), counted.
    expect(await db.query('SELECT run_id, results::int FROM run_purges WHERE run_id = $1', [run.id])).toEqual(
      [{ run_id: run.id, results: 1 }],
    );
  });
});

describe('the results table (migrations ResultsWritePath, ResultsWithoutIdIndex)', () => {
  let database: TestDatabase;
  let db: DataSource;
  const writer = new ResultsWriter(new ResultsObservers());

  beforeAll(async () => {
    database = await createTestDatabase();
    db = await new DataSource(dataSourceOptions(database.url, 4)).initialize();
  });
  afterAll(async () => {
    await db.destroy();
    await database.drop();
  });

  let seq = 0;
  const seed = async () => {
    seq += 1;
    const [{ id }] = await db.query(`INSERT INTO projects (key, name) VALUES ($1, 'fk') RETURNING id`, [
      `FK${seq}`,
    ]);
    const projectId = String(id);
    const runs = await db.getRepository(RunEntity).save([
      { projectId, name: 'a', startedAt: new Date(), attributes: {} },
      { projectId, name: 'b', startedAt: new Date(), attributes: {} },
    ]);
    for (const run of runs) {
      await db.transaction((tx) =>
        writer.write(tx, run, [
          { name: 'one', suite: 'S', status: 'PASSED' },
          { uuid: randomUUID(), name: 'two', suite: 'S', status: 'FAILED' },
        ]),
      );
    }
    return { projectId, runs };
  };
  const resultsOf = (projectId: string) =>
    db.query<{ run_id: string; test_id: string }[]>(
      'SELECT run_id, test_id FROM results WHERE project_id = $1',
      [projectId],
    );

  it('deleting a run queues its results, and only those, for the purge (src/retention/)', async () => {
    const { projectId, runs } = await seed();
    await db.query('DELETE FROM runs WHERE id = $1', [runs[0].id]);
    expect(await db.query('SELECT run_id, project_id, results::int FROM run_purges')).toEqual([
      { run_id: runs[0].id, project_id: projectId, results: 2 },
    ]);
    const queued = await db.query(
      'SELECT run_id FROM results WHERE project_id = $1 AND run_id IN (SELECT run_id FROM run_purges)',
      [projectId],
    );
    expect(queued.map((r: { run_id: string }) => String(r.run_id))).toEqual([runs[0].id, runs[0].id]);
    await db.query('DELETE FROM results WHERE run_id = $1', [runs[0].id]);
    await db.query('DELETE FROM run_purges');
    const left = await resultsOf(projectId);
    expect(left).toHaveLength(2);
    expect(left.every((r) => String(r.run_id) === runs[1].id)).toBe(true);
  });

  // test_health has no foreign key (TestHealthWithoutForeignKey): the delete trigger of test_cases removes it.
  const healthOf = (projectId: string) =>
    db.query<{ test_id: string }[]>('SELECT test_id FROM test_health WHERE project_id = $1', [projectId]);
  const addHealth = (projectId: string) =>
    db.query(
      'INSERT INTO test_health (test_id, project_id) SELECT id, project_id FROM test_cases WHERE project_id = $1',
      [projectId],
    );

  it('deleting a test case deletes its results, outcomes and earlier attempts, and its health', async () => {
    const { projectId } = await seed();
    await addHealth(projectId);
    const [one] = await db.query(`SELECT id FROM test_cases WHERE project_id = $1 AND name = 'one'`, [
      projectId,
    ]);
    await db.query(
      `INSERT INTO results (run_id, project_id, test_id, name, status, outcome)
         SELECT run_id, project_id, test_id, name, 'FAILED', false FROM results WHERE test_id = $1`,
      [one.id],
    );
    await db.query('DELETE FROM test_cases WHERE id = $1', [one.id]);
    const left = await resultsOf(projectId);
    expect(left).toHaveLength(2);
    expect(left.some((r) => String(r.test_id) === String(one.id))).toBe(false);
    const health = await healthOf(projectId);
    expect(health).toHaveLength(1);
    expect(String(health[0].test_id)).not.toBe(String(one.id));
  });

  it("deleting a project's row (the purge's last step) deletes its runs, test cases, results and test health", async () => {
    const { projectId } = await seed();
    await addHealth(projectId);
    expect(await healthOf(projectId)).toHaveLength(2);
    await db.query('UPDATE projects SET deleting_at = now() WHERE id = $1', [projectId]);
    await new RetentionRepository(db).deleteProjectRow(projectId);
    expect(await healthOf(projectId)).toEqual([]);
    expect(await resultsOf(projectId)).toEqual([]);
    expect(await db.query('SELECT id FROM test_cases WHERE project_id = $1', [projectId])).toEqual([]);
  });

  it('keeps a UUID unique within a project, and allows any number of results without one (attempts beside the outcome)', async () => {
    const { projectId, runs } = await seed();
    const [{ uuid }] = await db.query(
      'SELECT uuid FROM results WHERE project_id = $1 AND uuid IS NOT NULL LIMIT 1',
      [projectId],
    );
    const [{ test_id }] = await db.query('SELECT test_id FROM results WHERE project_id = $1 LIMIT 1', [
      projectId,
    ]);
    const insert = (u: string | null) =>
      db.query(
        `INSERT INTO results (run_id, project_id, test_id, uuid, name, status, outcome) VALUES ($1, $2, $3, $4, 'x', 'PASSED', false)`,
        [runs[1].id, projectId, test_id, u],
      );
    await expect(insert(uuid)).rejects.toMatchObject({
      driverError: expect.objectContaining({ code: '23505' }),
    });
    await insert(null);
    await insert(null);
  });

  const indexesOf = async (runner: { query: DataSource['query'] }) =>
    (
      await runner.query<{ indexname: string }[]>(
        `SELECT indexname FROM pg_indexes WHERE tablename = 'results' ORDER BY indexname`,
      )
    ).map((r) => r.indexname);

  it('has the indexes its reads use (by run and status, by UUID, by test and run: outcomes and earlier attempts apart), and none on id, which nothing reads by', async () => {
    expect(await indexesOf(db)).toEqual([
      'ix_results_run_status',
      'ix_results_test_attempts',
      'uq_results_project_uuid',
      'uq_results_test_run_outcome',
    ]);
  });

  it('gets the by-test indexes before outcomes back from OutcomeIndexes down, and the outcome ones again with up', async () => {
    const runner = db.createQueryRunner();
    await runner.startTransaction();
    try {
      const migration = new OutcomeIndexes1795723200000();
      await migration.down(runner);
      expect(await indexesOf(runner)).toEqual([
        'ix_results_run_status',
        'ix_results_test_history',
        'uq_results_project_uuid',
        'uq_results_run_test_outcome',
      ]);
      await migration.up(runner);
      expect(await indexesOf(runner)).toEqual([
        'ix_results_run_status',
        'ix_results_test_attempts',
        'uq_results_project_uuid',
        'uq_results_test_run_outcome',
      ]);
    } finally {
      await runner.rollbackTransaction();
      await runner.release();
    }
  });

  it('gets its primary key back from ResultsWithoutIdIndex down, and loses it again with up', async () => {
    const runner = db.createQueryRunner();
    await runner.startTransaction();
    try {
      const migration = new ResultsWithoutIdIndex1764640000000();
      await migration.down(runner);
      expect(await indexesOf(runner)).toContain('results_pkey');
      await migration.up(runner);
      expect(await indexesOf(runner)).not.toContain('results_pkey');
    } finally {
      await runner.rollbackTransaction();
      await runner.release();
    }
  });

  it("looks a test's identity up by an index no other answers, however small the planner thinks the project (TestCaseIdentityFirst)", async () => {
    const definition = async (q: { query: DataSource['query'] }) => {
      const [row] = await q.query<{ d: string }[]>(
        `SELECT pg_get_indexdef('uq_test_cases_identity'::regclass) AS d`,
      );
      return row.d;
    };
    expect(await definition(db)).toContain('(identity, project_id)');
    // A table never analysed, whose project the planner takes for one row: 1000 lookups of new tests among 3000
    // stay 1000 probes of the unique index (with the project first, each scanned the project's 3000 test cases).
    const runner = db.createQueryRunner();
    await runner.startTransaction();
    try {
      await runner.query('CREATE TEMP TABLE tc (LIKE test_cases INCLUDING ALL) ON COMMIT DROP');
      await runner.query(
        `INSERT INTO tc (project_id, identity, name) SELECT 1, md5('known' || g)::uuid, 'n' || g FROM generate_series(1, 3000) g`,
      );
      const [plan]: { 'QUERY PLAN': { Plan: unknown }[] }[] = await runner.query(
        `EXPLAIN (ANALYZE, FORMAT JSON) SELECT t.id FROM unnest((SELECT array_agg(md5('new' || g)::uuid) FROM generate_series(1, 1000) g)) AS k(identity)
           CROSS JOIN LATERAL (SELECT id FROM tc WHERE identity = k.identity AND project_id + 0 = 1 LIMIT 1) t`,
      );
      const text = JSON.stringify(plan['QUERY PLAN']);
      expect(text).toContain('"Index Name":"tc_identity_project_id_key"');
      expect(text).not.toContain('"Rows Removed by Filter":3000');
      const migration = new TestCaseIdentityFirst1795850000000();
      await migration.down(runner);
      expect(await definition(runner)).toContain('(project_id, identity)');
      await migration.up(runner);
      expect(await definition(runner)).toContain('(identity, project_id)');
    } finally {
      await runner.rollbackTransaction();
      await runner.release();
    }
  });
});

/** Resolves once a statement starting like `pattern` (LIKE) waits on a lock in this database. */
/**
 * Runs `before` in a transaction, then holds the transaction open (its locks with it) until `release`, then runs
 * `after` in it; answers once `before` is done, with `done`, what the transaction answers.
 */
async function holdOpen<T>(
  db: DataSource,
  before: (tx: EntityManager) => Promise<unknown>,
  after: (tx: EntityManager) => Promise<T>,
): Promise<{ release: () => void; done: Promise<T> }> {
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  let ready!: () => void;
  const wrote = new Promise<void>((resolve) => (ready = resolve));
  const done = db.transaction(async (tx) => {
    await before(tx);
    ready();
    await held;
    return after(tx);
  });
  await Promise.race([wrote, done]);
  return { release, done };
}

async function waitingOnLock(db: DataSource, pattern: string): Promise<void> {
  const query = `SELECT 1 FROM pg_stat_activity
                  WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE $1`;
  while (!(await db.query(query, [pattern])).length) {
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
