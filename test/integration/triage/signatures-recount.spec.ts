import { setTimeout as sleep } from 'node:timers/promises';
import { DataSource, type EntityManager, type QueryRunner } from 'typeorm';
import { dataSourceOptions } from '../../../src/database/data-source-options.js';
import type { DeletedFailures } from '../../../src/results/results-observers.js';
import { recountSignatures } from '../../../src/triage/signatures-recount.js';
import { AppError, ErrorCode } from '../../../src/common/app-error.js';
import { PendingFailures, SignatureIdCache, suggestFor } from '../../../src/triage/signatures.writer.js';
import { createTestDatabase, TestDatabase } from '../../support/database.js';
import { FailureSignatures1795780000000 } from '../../../migrations/1795780000000-FailureSignatures.js';
import { SignatureRecount1795820000000 } from '../../../migrations/1795820000000-SignatureRecount.js';

interface SignatureRow {
  id: string;
  occurrences: string;
  tests: number;
  runs: number;
  first_run_id: string;
  last_run_id: string;
  triage: string;
  suggested_from_id: string | null;
}

/**
 * Failure signatures when results are deleted (src/triage/signatures-recount.ts): what a purge batch takes away, and
 * how it meets writes of the same failures (signatures.writer.ts) in flight.
 */
describe('failure signatures recounted as results are deleted', () => {
  let database: TestDatabase;
  let db: DataSource;
  let projectId: string;
  let nextResult = 1;
  /** The failing results written, by run: each one's signature key and test. */
  const written = new Map<string, { resultId: string; testId: string; key: string }[]>();

  beforeAll(async () => {
    database = await createTestDatabase();
    db = await new DataSource(dataSourceOptions(database.url, 6)).initialize();
    const [{ id }] = await db.query(`INSERT INTO projects (key, name) VALUES ('RC', 'recount') RETURNING id`);
    projectId = String(id);
  });
  afterAll(async () => {
    await db.destroy();
    await database.drop();
  });

  let hour = 0;
  /** A finished run, each started an hour after the one before. */
  const newRun = async (on: Pick<EntityManager, 'query'> = db): Promise<string> => {
    const [{ id }] = await on.query(
      `INSERT INTO runs (project_id, name, status, started_at)
       VALUES ($1, 'r', 'FINISHED', timestamptz '2026-01-01' + make_interval(hours => $2)) RETURNING id`,
      [projectId, hour++],
    );
    return String(id);
  };

  /** Failures (test, key) of a run, stored as the writer stores them; the ids of the signatures it created. */
  async function write(
    tx: Pick<EntityManager, 'query'>,
    runId: string,
    failures: [testId: string, key: string][],
    cache?: SignatureIdCache,
  ): Promise<string[]> {
    const pending = new PendingFailures();
    const rows = failures.map(([testId, key]) => ({ resultId: String(nextResult++), testId, key }));
    pending.add(rows.map((r) => ({ ...r, message: r.key })));
    written.set(runId, [...(written.get(runId) ?? []), ...rows]);
    return pending.store(tx, projectId, runId, cache);
  }

  /**
   * Deletes these failing results of the run as a purge batch does (their failure_results rows with them), and answers
   * what the batch hands the observers.
   */
  async function deleteFailures(
    tx: Pick<EntityManager, 'query'>,
    runId: string,
    testIds?: string[],
  ): Promise<DeletedFailures[]> {
    const rows = (written.get(runId) ?? []).filter((r) => !testIds || testIds.includes(r.testId));
    const gone: { result_id: string; signature_id: string }[] = await tx.query(
      `WITH f AS (DELETE FROM failure_results WHERE run_id = $1 AND result_id = ANY($2::bigint[])
                  RETURNING result_id, signature_id)
       SELECT * FROM f`,
      [runId, rows.map((r) => r.resultId)],
    );
    const testOf = new Map(rows.map((r) => [r.resultId, r.testId]));
    const tally = new Map<string, DeletedFailures>();
    for (const g of gone) {
      const testId = testOf.get(String(g.result_id))!;
      const key = `${g.signature_id}/${testId}`;
      const t = tally.get(key) ?? { runId, signatureId: String(g.signature_id), testId, count: 0 };
      t.count++;
      tally.set(key, t);
    }
    return [...tally.values()];
  }

  const signature = async (key: string): Promise<SignatureRow | undefined> =>
    (
      await db.query(
        `SELECT id, occurrences, tests, runs, first_run_id, last_run_id, triage, suggested_from_id
           FROM failure_signatures WHERE project_id = $1 AND key = $2`,
        [projectId, key],
      )
    )[0];
  const links = async (id: string): Promise<{ runs: [string, number][]; tests: [string, number][] }> => ({
    runs: (
      await db.query(
        'SELECT run_id, occurrences FROM failure_signature_runs WHERE signature_id = $1 ORDER BY run_id',
        [id],
      )
    ).map((r: { run_id: string; occurrences: number }) => [String(r.run_id), r.occurrences]),
    tests: (
      await db.query(
        'SELECT test_id, occurrences FROM failure_signature_tests WHERE signature_id = $1 ORDER BY test_id',
        [id],
      )
    ).map((r: { test_id: string; occurrences: number }) => [String(r.test_id), r.occurrences]),
  });

  /** A transaction of its own on a connection of its own, left open. */
  async function open(): Promise<QueryRunner> {
    const runner = db.createQueryRunner();
    await runner.connect();
    await runner.startTransaction();
    // A wait where none is meant fails the test instead of hanging it.
    await runner.query(`SET LOCAL lock_timeout = '5s'`);
    return runner;
  }

  /** Until another session of this database waits for a lock (the session `pid` is not that one). */
  async function untilWaiting(): Promise<void> {
    for (let i = 0; i < 200; i++) {
      const [{ n }] = await db.query(
        `SELECT count(*)::int AS n FROM pg_stat_activity
          WHERE datname = current_database() AND wait_event_type = 'Lock'`,
      );
      if (n > 0) {
        return;
      }
      await sleep(25);
    }
    throw new Error('no session came to wait');
  }

  it('takes away what deleted results added, batch by batch, and deletes a signature left without occurrences', async () => {
    const [r1, r2] = [await newRun(), await newRun()];
    await db.transaction((tx) =>
      write(tx, r1, [
        ['1', 'K1'],
        ['1', 'K1'],
        ['2', 'K1'],
        ['1', 'L1'],
      ]),
    );
    await db.transaction((tx) => write(tx, r2, [['1', 'K1']]));
    const k = (await signature('K1'))!;
    expect(k).toMatchObject({ occurrences: '4', tests: 2, runs: 2, first_run_id: r1, last_run_id: r2 });

    // A first batch deletes test 1's results of r1: test 2 still has its failure there, so r1 is still K1's.
    await db.transaction(async (tx) => recountSignatures(tx, await deleteFailures(tx, r1, ['1'])));
    expect(await signature('K1')).toMatchObject({ occurrences: '2', tests: 2, runs: 2, first_run_id: r1 });
    expect(await links(k.id)).toEqual({
      runs: [
        [r1, 1],
        [r2, 1],
      ],
      tests: [
        ['1', 1],
        ['2', 1],
      ],
    });
    // L1 had a failure in r1 only.
    expect(await signature('L1')).toBeUndefined();

    // The last batch: K1 is r2's alone.
    await db.transaction(async (tx) => recountSignatures(tx, await deleteFailures(tx, r1, ['2'])));
    expect(await signature('K1')).toMatchObject({
      occurrences: '1',
      tests: 1,
      runs: 1,
      first_run_id: r2,
      last_run_id: r2,
    });
    expect(await links(k.id)).toEqual({ runs: [[r2, 1]], tests: [['1', 1]] });
  });

  it('reads first and last seen again only when the run they name loses its link', async () => {
    const [r1, r2, r3] = [await newRun(), await newRun(), await newRun()];
    for (const run of [r1, r2, r3]) {
      await db.transaction((tx) => write(tx, run, [['4', 'K9']]));
    }
    const k = (await signature('K9'))!;
    expect(k).toMatchObject({ runs: 3, first_run_id: r1, last_run_id: r3 });
    // A run between them: first and last stay.
    await db.transaction(async (tx) => recountSignatures(tx, await deleteFailures(tx, r2)));
    expect(await signature('K9')).toMatchObject({
      occurrences: '2',
      runs: 2,
      first_run_id: r1,
      last_run_id: r3,
    });
    // The newest (DELETE /api/runs/{id}): last seen goes back to the run left.
    await db.transaction(async (tx) => recountSignatures(tx, await deleteFailures(tx, r3)));
    const [{ started_at }] = await db.query('SELECT started_at FROM runs WHERE id = $1', [r1]);
    expect(await signature('K9')).toMatchObject({
      occurrences: '1',
      runs: 1,
      first_run_id: r1,
      last_run_id: r1,
    });
    const [seen] = await db.query(
      'SELECT first_seen_at, last_seen_at FROM failure_signatures WHERE id = $1',
      [k.id],
    );
    expect(seen).toEqual({ first_seen_at: started_at, last_seen_at: started_at });
  });

  it('passes over a signature a write holds rather than wait for it, and leaves it to that write', async () => {
    const [r1, r2] = [await newRun(), await newRun()];
    await db.transaction((tx) => write(tx, r1, [['1', 'K2']]));
    const k = (await signature('K2'))!;
    // A write of K2 has read its signature (FOR KEY SHARE, as it does) and goes on.
    const writer = await open();
    await writer.query('SELECT 1 FROM failure_signatures WHERE id = $1 FOR KEY SHARE', [k.id]);
    const purge = await open();
    await recountSignatures(purge.manager, await deleteFailures(purge.manager, r1));
    await purge.commitTransaction();
    await purge.release();
    expect(await signature('K2')).toMatchObject({ id: k.id, occurrences: '0', runs: 0, tests: 0 });
    // The write stores its failure: the signature is counted from its run alone.
    await write(writer.manager, r2, [['3', 'K2']]);
    await writer.commitTransaction();
    await writer.release();
    expect(await signature('K2')).toMatchObject({
      id: k.id,
      occurrences: '1',
      tests: 1,
      runs: 1,
      first_run_id: r2,
      last_run_id: r2,
    });
  });

  it.each([
    ['looked up', 'K3', false],
    ['known by a cached id', 'K6', true],
  ])(
    'has a write of a failure (%s) whose signature the purge is deleting wait, then store it under a new one',
    async (_how, key, cached) => {
      const cache = cached ? new SignatureIdCache(100) : undefined;
      const [r1, r2] = [await newRun(), await newRun()];
      await db.transaction((tx) => write(tx, r1, [['1', key]], cache));
      const k = (await signature(key))!;
      // The purge holds the signature left without occurrences (FOR UPDATE, as it does before deleting it).
      const purge = await open();
      await purge.query('SELECT 1 FROM failure_signatures WHERE id = $1 FOR UPDATE', [k.id]);
      const writer = await open();
      const stored = write(writer.manager, r2, [['1', key]], cache);
      await untilWaiting();
      await purge.query('DELETE FROM failure_signatures WHERE id = $1', [k.id]);
      await purge.commitTransaction();
      await purge.release();
      const created = await stored;
      await writer.commitTransaction();
      await writer.release();
      const again = (await signature(key))!;
      expect(created).toEqual([again.id]);
      expect(again.id).not.toBe(k.id);
      expect(again).toMatchObject({ occurrences: '1', tests: 1, runs: 1, first_run_id: r2 });
      expect(
        await db.query('SELECT count(*)::int AS n FROM failure_results WHERE run_id = $1', [r2]),
      ).toEqual([{ n: 1 }]);
    },
  );

  it('stores known failures under their cached ids, and looks up again one whose signature the purge deleted', async () => {
    const cache = new SignatureIdCache(100);
    const [r1, r2, r3] = [await newRun(), await newRun(), await newRun()];
    const created = await db.transaction((tx) => write(tx, r1, [['1', 'K5']], cache));
    const k = (await signature('K5'))!;
    expect(created).toEqual([k.id]);
    expect(cache.get(projectId, 'K5')).toBe(k.id);
    // Known: stored under the cached id, nothing created.
    expect(
      await db.transaction((tx) =>
        write(
          tx,
          r2,
          [
            ['1', 'K5'],
            ['2', 'K5'],
          ],
          cache,
        ),
      ),
    ).toEqual([]);
    expect(await signature('K5')).toMatchObject({
      id: k.id,
      occurrences: '3',
      tests: 2,
      runs: 2,
      last_run_id: r2,
    });
    // The purge takes every failure of K5 away, and the signature with them; the cache still names it.
    for (const run of [r1, r2]) {
      await db.transaction(async (tx) => recountSignatures(tx, await deleteFailures(tx, run)));
    }
    expect(await signature('K5')).toBeUndefined();
    const again = await db.transaction((tx) => write(tx, r3, [['2', 'K5']], cache));
    const renewed = (await signature('K5'))!;
    expect(again).toEqual([renewed.id]);
    expect(renewed.id).not.toBe(k.id);
    expect(renewed).toMatchObject({ occurrences: '1', tests: 1, runs: 1, first_run_id: r3 });
    expect(cache.get(projectId, 'K5')).toBe(renewed.id);
    expect(await links(renewed.id)).toEqual({ runs: [[r3, 1]], tests: [['2', 1]] });
  });

  it('gives a new signature no suggestion from a triaged one the purge is deleting', async () => {
    const [r1, r2] = [await newRun(), await newRun()];
    const base = 'Checkout failed: payment provider answered <n> for order <id>';
    await db.transaction((tx) => write(tx, r1, [['1', base]]));
    const triaged = (await signature(base))!;
    await db.query(`UPDATE failure_signatures SET triage = 'PRODUCT_BUG' WHERE id = $1`, [triaged.id]);
    const purge = await open();
    await purge.query('SELECT 1 FROM failure_signatures WHERE id = $1 FOR UPDATE', [triaged.id]);
    const writer = await open();
    const stored = (async () => {
      const created = await write(writer.manager, r2, [['2', `${base} (retrying)`]]);
      await suggestFor(writer.manager, projectId, created);
    })();
    await untilWaiting();
    await purge.query('DELETE FROM failure_signatures WHERE id = $1', [triaged.id]);
    await purge.commitTransaction();
    await purge.release();
    await stored;
    await writer.commitTransaction();
    await writer.release();
    expect(await signature(`${base} (retrying)`)).toMatchObject({
      triage: 'TO_INVESTIGATE',
      suggested_from_id: null,
    });
  });

  it('refuses with 404, not a plain error, the failures of a run deleted since its write began', async () => {
    // A run's results have no foreign key to it: a delete committed while a batch was written leaves the batch's new
    // signatures nothing to insert (their first run is read from the run's row).
    const gone = await newRun();
    await db.query('DELETE FROM runs WHERE id = $1', [gone]);
    const refused = await db
      .transaction((tx) => write(tx, gone, [['1', `GONE-${gone}`]]))
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(AppError);
    expect(refused).toMatchObject({ code: ErrorCode.NOT_FOUND, message: `Run ${gone} not found` });
    const [{ n }]: { n: string }[] = await db.query(
      'SELECT count(*) AS n FROM failure_signatures WHERE key = $1',
      [`GONE-${gone}`],
    );
    expect(Number(n)).toBe(0);
  });

  it('meets writes of the same failures and tests without a deadlock, and leaves the counts those of the rows left', async () => {
    const keys = ['S1', 'S2', 'S3', 'S4'];
    const tests = Array.from({ length: 12 }, (_, i) => String(100 + i));
    /** Each test fails with one key, and every third twice (an attempt); `only` is a key of the old runs at first. */
    const failuresOf = (n: number, only: boolean): [string, string][] =>
      tests.flatMap((t, i): [string, string][] => {
        const key = only && i % 4 === 0 ? 'S-ONLY' : keys[(i + n) % keys.length];
        return i % 3 === 0
          ? [
              [t, key],
              [t, key],
            ]
          : [[t, key]];
      });
    const old: string[] = [];
    for (let n = 0; n < 8; n++) {
      const run = await newRun();
      await db.transaction((tx) => write(tx, run, failuresOf(n, true)));
      old.push(run);
    }
    // Writers of new runs with the same tests and keys (S-ONLY too, from their third run on), while the purge deletes
    // the old runs' failures, each run in two batches of tests; two of them share a cache of signature ids, as a
    // replica's writers do.
    const cache = new SignatureIdCache(100);
    const writers = Array.from({ length: 3 }, async (_, w) => {
      for (let n = 0; n < 8; n++) {
        const run = await newRun();
        await db.transaction(async (tx) => {
          const created = await write(tx, run, failuresOf(n + w, n >= 2), w < 2 ? cache : undefined);
          await suggestFor(tx, projectId, created);
        });
      }
    });
    const purge = (async () => {
      for (const run of old) {
        for (const half of [tests.slice(0, 6), tests.slice(6)]) {
          await db.transaction(async (tx) => recountSignatures(tx, await deleteFailures(tx, run, half)));
        }
      }
    })();
    await Promise.all([...writers, purge]);

    // Each signature's counts and link rows are what its failure_results rows say.
    const testOf = new Map([...written.values()].flat().map((r) => [r.resultId, r.testId]));
    const rows: { signature_id: string; run_id: string; result_id: string }[] = await db.query(
      `SELECT f.signature_id::text, f.run_id::text, f.result_id::text FROM failure_results f
         JOIN failure_signatures s ON s.id = f.signature_id WHERE s.key LIKE 'S%'`,
    );
    const expected = new Map<
      string,
      { occurrences: number; runs: Set<string>; tests: Map<string, number> }
    >();
    for (const r of rows) {
      const e = expected.get(r.signature_id) ?? { occurrences: 0, runs: new Set(), tests: new Map() };
      e.occurrences++;
      e.runs.add(r.run_id);
      const t = testOf.get(r.result_id)!;
      e.tests.set(t, (e.tests.get(t) ?? 0) + 1);
      expected.set(r.signature_id, e);
    }
    const signatures: { id: string; occurrences: string; tests: number; runs: number }[] = await db.query(
      `SELECT id::text, occurrences, tests, runs FROM failure_signatures WHERE key LIKE 'S%' AND occurrences > 0`,
    );
    expect(signatures.map((s) => s.id).sort()).toEqual([...expected.keys()].sort());
    for (const s of signatures) {
      const e = expected.get(s.id)!;
      expect({ id: s.id, occurrences: Number(s.occurrences), tests: s.tests, runs: s.runs }).toEqual({
        id: s.id,
        occurrences: e.occurrences,
        tests: e.tests.size,
        runs: e.runs.size,
      });
      const l = await links(s.id);
      expect(l.runs.map(([run]) => run).sort()).toEqual([...e.runs].sort());
      expect(Object.fromEntries(l.tests)).toEqual(Object.fromEntries(e.tests));
    }
  });

  it('repairs, in SignatureRecount up, the signatures that runs deleted before it left behind', async () => {
    const runner = db.createQueryRunner();
    await runner.startTransaction();
    try {
      const migration = new SignatureRecount1795820000000();
      await migration.down(runner);
      const q = (sql: string, params: unknown[] = []) => runner.query(sql, params);
      // As the service stored them before: K in r1 (tests 1, 2) and r2 (test 1); L in r1 alone, triaged; M in r2,
      // suggested from L.
      const [r1, r2] = [await newRun(runner), await newRun(runner)];
      const [{ started: t1 }] = await q('SELECT started_at AS started FROM runs WHERE id = $1', [r1]);
      const [{ started: t2 }] = await q('SELECT started_at AS started FROM runs WHERE id = $1', [r2]);
      const sig = async (key: string, runs: number, occurrences: number, tests: number) =>
        String(
          (
            await q(
              `INSERT INTO failure_signatures
                      (project_id, key, first_run_id, first_seen_at, last_run_id, last_seen_at, occurrences, tests, runs)
               VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING id`,
              [projectId, key, r1, t1, r2, t2, occurrences, tests, runs],
            )
          )[0].id,
        );
      const [k, l, m] = [await sig('mK', 2, 3, 2), await sig('mL', 1, 1, 1), await sig('mM', 1, 1, 1)];
      await q(`UPDATE failure_signatures SET triage = 'PRODUCT_BUG' WHERE id = $1`, [l]);
      await q(
        `UPDATE failure_signatures SET triage = 'PRODUCT_BUG', suggested_from_id = $1, suggested_similarity = 0.9
          WHERE id = $2`,
        [l, m],
      );
      const failing: [string, string, string][] = [
        [r1, '1', k],
        [r1, '2', k],
        [r1, '3', l],
        [r2, '1', k],
        [r2, '4', m],
      ];
      for (const [run, test, signatureId] of failing) {
        const [{ id }] = await q(
          `INSERT INTO results (run_id, project_id, test_id, name, suite, status)
           VALUES ($1, $2, $3, $4, 'S', 'FAILED') RETURNING id`,
          [run, projectId, test, `t${test}`],
        );
        await q('INSERT INTO failure_results (run_id, result_id, signature_id) VALUES ($1, $2, $3)', [
          run,
          id,
          signatureId,
        ]);
      }
      await q(
        `INSERT INTO failure_signature_runs (signature_id, run_id, occurrences)
         VALUES ($1, $3, 2), ($1, $4, 1), ($2, $3, 1), ($5, $4, 1)`,
        [k, l, r1, r2, m],
      );
      await q(
        `INSERT INTO failure_signature_tests (signature_id, test_id, occurrences)
         VALUES ($1, 1, 2), ($1, 2, 1), ($2, 3, 1), ($3, 4, 1)`,
        [k, l, m],
      );
      // r1 deleted: its failure_results rows went with it (their foreign key), nothing else did.
      await q('DELETE FROM runs WHERE id = $1', [r1]);
      expect(await q('SELECT count(*)::int AS n FROM failure_results WHERE run_id = $1', [r1])).toEqual([
        { n: 0 },
      ]);

      await migration.up(runner);
      const row = async (id: string) =>
        (
          await q(
            `SELECT occurrences::int, tests, runs, first_run_id::text, last_run_id::text, triage, suggested_from_id
               FROM failure_signatures WHERE id = $1`,
            [id],
          )
        )[0];
      expect(await row(k)).toEqual({
        occurrences: 1,
        tests: 1,
        runs: 1,
        first_run_id: r2,
        last_run_id: r2,
        triage: 'TO_INVESTIGATE',
        suggested_from_id: null,
      });
      expect(await row(l)).toBeUndefined();
      expect(await row(m)).toMatchObject({ occurrences: 1, triage: 'PRODUCT_BUG', suggested_from_id: null });
      expect(
        await q('SELECT test_id::text, occurrences FROM failure_signature_tests WHERE signature_id = $1', [
          k,
        ]),
      ).toEqual([{ test_id: '1', occurrences: 1 }]);
      expect(
        await q(
          'SELECT run_id::text, started_at = $2 AS seen FROM failure_signature_runs WHERE signature_id = $1',
          [k, t2],
        ),
      ).toEqual([{ run_id: r2, seen: true }]);
      // failure_results' rows now outlive their run's row, for the purge to delete with their results.
      await q('DELETE FROM runs WHERE id = $1', [r2]);
      expect(await q('SELECT count(*)::int AS n FROM failure_results WHERE run_id = $1', [r2])).toEqual([
        { n: 2 },
      ]);
    } finally {
      await runner.rollbackTransaction();
      await runner.release();
    }
  });

  it("runs FailureSignatures' backfill, the service's writer, on the tables as it creates them", async () => {
    const runner = db.createQueryRunner();
    await runner.startTransaction();
    try {
      await new SignatureRecount1795820000000().down(runner);
      await new FailureSignatures1795780000000().down(runner);
      const run = await newRun(runner);
      await runner.query('UPDATE runs SET count_failed = 1 WHERE id = $1', [run]);
      await runner.query(
        `INSERT INTO results (run_id, project_id, test_id, name, suite, status, message)
         VALUES ($1, $2, 1, 't1', 'S', 'FAILED', 'Backfilled failure')`,
        [run, projectId],
      );
      await new FailureSignatures1795780000000().up(runner);
      await new SignatureRecount1795820000000().up(runner);
      expect(
        await runner.query(
          `SELECT s.key, s.occurrences::int, l.run_id::text, l.started_at = r.started_at AS seen
             FROM failure_signatures s JOIN failure_signature_runs l ON l.signature_id = s.id
             JOIN runs r ON r.id = l.run_id WHERE l.run_id = $1`,
          [run],
        ),
      ).toEqual([{ key: 'Backfilled failure', occurrences: 1, run_id: run, seen: true }]);
    } finally {
      await runner.rollbackTransaction();
      await runner.release();
    }
  });
});
