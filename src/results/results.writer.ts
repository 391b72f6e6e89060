import { hash } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { AppError } from '../common/app-error.js';
import { isDeadlock, isLockTimeout, isUniqueViolation } from '../common/db-errors.js';
import { stripFormatCharacters } from '../common/text.js';
import { CopyText, copyField, copyIn } from '../database/copy-in.js';
import { idArray, textArray } from '../database/id-array.js';
import {
  type Attempt,
  type AttemptPlan,
  LAST_ATTEMPT_FIRST,
  STATUS_BIT_SQL,
  type StoredOutcome,
  addCounts as addUp,
  countOutcome,
  noRunCounts,
  planAttempts,
} from './attempts.js';
import { RESULT_STATUSES, type ResultStatus } from './entities.js';
import type { ResultInput, RunCounts } from './result-input.js';
import {
  type AfterCommit,
  type OutcomeList,
  type RunRef,
  ResultsObservers,
  type StoredResult,
  type TestOutcome,
} from './results-observers.js';
import { type LearnedTestCase, TestCaseIdCache } from './test-case-id-cache.js';
import { lockTestCasesShared } from './test-case-guard.js';

export type { RunRef } from './results-observers.js';

export interface WriteOutcome {
  /** Ids of the stored results in input order; null where a result with that UUID already existed. */
  ids: (string | null)[];
  /** The run's counts after this batch. */
  counts: RunCounts;
  /** Test case ids this write looked up or created: for `remember`, once the transaction has committed. */
  learned: LearnedTestCase[];
  /** Results whose name, suite or attribute names lost invisible format characters (see stripFormatCharactersOf). */
  formatStripped: number;
  /** The observers' work once the transaction has committed: run by `remember`. */
  afterCommit?: AfterCommit[];
  /**
   * Whether the run was finished when this batch's counts were added: read under the run's row lock, which the batch
   * holds to its commit, so a finish that committed after the caller read the run (and whose gate did not count this
   * batch) shows here. V1 refuses the batch then, V2 has the run's gate evaluated again.
   */
  runFinished?: boolean;
}

/** See ResultsWriter.openRun. */
export interface RunWriter {
  /**
   * Stores `items` (once the COPY before theirs is done); the counts of everything added so far. A test met again
   * in the run is another attempt of it; with `repeatsAreTests`, it is another test of the same suite and name
   * (formats whose reports list each attempt in one element, see the import), stored under a test of its own.
   */
  add(items: ResultInput[], repeatsAreTests?: boolean): Promise<RunCounts>;
  /**
   * Waits for the last COPY and adds the counts to the run: the run's counts, the test cases learned, and how many
   * results lost invisible format characters.
   */
  finish(): Promise<{
    counts: RunCounts;
    learned: LearnedTestCase[];
    formatStripped: number;
    afterCommit: AfterCommit[];
  }>;
  /** Resolves once no COPY is in flight, whatever its outcome. */
  settled(): Promise<void>;
}

/**
 * The stable identity of a test: the MD5 of its explicit id when the client sends one, else of suite + name,
 * written as a UUID (the column's type: 16 bytes that compare as bytes).
 */
export function testIdentity(r: Pick<ResultInput, 'testId' | 'suite' | 'name'>): string {
  const key = r.testId ? `id\u0000${r.testId}` : `sn\u0000${r.suite ?? ''}\u0000${r.name}`;
  const h = hash('md5', key, 'hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** What a result's name becomes when nothing is left of it once its format characters are gone. */
const UNNAMED = '(unnamed)';

/**
 * Removes invisible format characters (Unicode Cf, such as U+202E RIGHT-TO-LEFT OVERRIDE: see stripFormatCharacters)
 * from the names of the results, in place: test names, suites and attribute names, whichever surface they came
 * through (V1, V2, an import), before they name a test case. People type the names refused with 400; these come
 * from tools and reports, which are stored rather than refused. Returns how many results were changed.
 */
export function stripFormatCharactersOf(items: ResultInput[]): number {
  let changed = 0;
  for (const item of items) {
    let touched = false;
    const name = stripFormatCharacters(item.name);
    if (name !== item.name) {
      item.name = /\S/.test(name) ? name : UNNAMED;
      touched = true;
    }
    if (item.suite !== undefined) {
      const suite = stripFormatCharacters(item.suite);
      if (suite !== item.suite) {
        item.suite = suite;
        touched = true;
      }
    }
    if (item.attributes !== undefined) {
      const attributes = withoutFormatCharacterKeys(item.attributes);
      if (attributes !== item.attributes) {
        item.attributes = attributes;
        touched = true;
      }
    }
    if (touched) {
      changed++;
    }
  }
  return changed;
}

/** The attributes with format characters removed from their names (the first of two names that become one wins). */
function withoutFormatCharacterKeys(attributes: Record<string, string>): Record<string, string> {
  let fitted: Record<string, string> | undefined;
  for (const key in attributes) {
    if (stripFormatCharacters(key) !== key) {
      fitted = Object.create(null) as Record<string, string>;
      break;
    }
  }
  if (fitted === undefined) {
    return attributes;
  }
  for (const key in attributes) {
    const clean = stripFormatCharacters(key);
    if (clean.length > 0 && fitted[clean] === undefined) {
      fitted[clean] = attributes[key];
    }
  }
  return fitted;
}

/** Indexes of the inputs without a UUID or with the first occurrence of one (UUIDs compare case-insensitively). */
function firstOfEachUuid(items: ResultInput[]): number[] {
  const seen = new Set<string>();
  const out: number[] = [];
  items.forEach((r, i) => {
    const uuid = r.uuid?.toLowerCase();
    if (!uuid) {
      out.push(i);
    } else if (!seen.has(uuid)) {
      seen.add(uuid);
      out.push(i);
    }
  });
  return out;
}

/**
 * `n` ids from an identity sequence, rising: one nextval() per block of the sequence's increment, the block's ids
 * numbered here (results take blocks of 100, see migration ResultIdBlocks; test cases, at increment 1, one
 * nextval() an id). The increment is read by the same statement, from its snapshot: a migration that raises it
 * while writers run only wastes ids; lowering it (ResultIdBlocks' down) wants the writers stopped, or batches
 * written meanwhile may fail on the primary key (and be retried), never store a duplicate id.
 * (A constant regclass: nextval() finds the sequence once, not once a row.)
 */
async function nextIds(
  tx: Pick<EntityManager, 'query'>,
  sequence: 'results_id_seq' | 'test_cases_id_seq',
  n: number,
): Promise<string[]> {
  const [{ step, starts }]: { step: string; starts: string[] }[] = await tx.query(
    `SELECT s.seqincrement AS step,
            ARRAY(SELECT nextval('${sequence}'::regclass) FROM generate_series(1, ceil($1::numeric / s.seqincrement)::int)) AS starts
       FROM pg_sequence s WHERE s.seqrelid = '${sequence}'::regclass`,
    [n],
  );
  return numberBlocks(starts, Number(step), n);
}

/** The first `n` ids of the blocks that begin at `starts` (in the order given), `step` ids each. */
export function numberBlocks(starts: string[], step: number, n: number): string[] {
  if (!Number.isSafeInteger(step) || step < 1) {
    throw new Error(`An id sequence must rise: its increment is ${step}`);
  }
  const ids = new Array<string>(n);
  let k = 0;
  for (const start of starts) {
    const size = Math.min(step, n - k);
    const first = Number(start);
    if (Number.isSafeInteger(first + size)) {
      for (let j = 0; j < size; j++) {
        ids[k++] = String(first + j);
      }
    } else {
      const big = BigInt(start);
      for (let j = 0; j < size; j++) {
        ids[k++] = String(big + BigInt(j));
      }
    }
  }
  if (k !== n) {
    throw new Error(`Expected ${n} ids, the sequence gave ${k}`);
  }
  return ids;
}

/**
 * Inserts the test cases of `identities` (the batch's last result of each naming its suite and name) that no
 * committed transaction has stored: one INSERT … SELECT, whatever their number, its ids from the table's own identity
 * column; answers those it inserted. The caller has just looked them up, or expects them to be new (see
 * ResultsWriter.newTestsOf), so the INSERT is a plain one first (ON CONFLICT's check and speculative insertion cost
 * each row about a third more); when one was stored (a unique violation: by a concurrent writer, once it committed,
 * or before, when the guess was wrong), it steps back and inserts with ON CONFLICT DO NOTHING, skipping those, which
 * the caller then looks up.
 *
 * In identity order, so that two statements inserting the same new tests cannot deadlock on each other. But a
 * transaction that inserts new tests batch after batch (an import) holds those of its earlier batches, and a writer
 * of one batch may wait for one of them while holding tests the import's next batch needs. PostgreSQL looks for a
 * deadlock once a wait, deadlock_timeout (1 s) after it began: when the writer of one batch had waited that long
 * before the import came to wait for it, only the import's look finds the cycle, at each try, and the import can
 * never go on (it cannot let go of its earlier batches). So a writer of one batch (`stepBack`: its transaction
 * holds no test case of its own before this statement) waits at most STEP_BACK_MS at a time: then it rolls back its
 * statement, letting go of what it inserted, and tries again, until the test it waits for is committed (or for the
 * statement timeout in all, as one wait would: then a lock timeout, a 503). Two transactions that each hold new
 * tests the other needs (two imports of the same new tests, two V2 deliveries of several runs) deadlock for good:
 * the one PostgreSQL picks tries its statement again up to DEADLOCK_TRIES times (the other may be a writer that
 * steps back), then fails.
 */
async function insertTestCases(
  tx: Pick<EntityManager, 'query'>,
  projectId: string,
  identities: string[],
  latest: Map<string, ResultInput>,
  stepBack: boolean,
): Promise<{ id: string; identity: string }[]> {
  // As text (see id-array.ts): a batch of 1,000 new tests is 4,000 elements, each quoted by node-postgres otherwise.
  const params = [
    projectId,
    idArray(identities),
    textArray(identities.map((k) => latest.get(k)!.testId ?? null)),
    textArray(identities.map((k) => latest.get(k)!.suite ?? '')),
    textArray(identities.map((k) => latest.get(k)!.name)),
  ];
  let skipStored = false;
  // One round trip each, as without the timeout (several statements without parameters: the simple protocol).
  const limit = stepBack ? `; SET LOCAL lock_timeout = ${STEP_BACK_MS}` : '';
  // Stepping back, the writer waits no longer in all than one wait could: the statement timeout (0: none).
  const waitingSince = Date.now();
  let longest: number | undefined;
  for (let tries = 1; ; tries++) {
    await tx.query(`SAVEPOINT test_cases_insert${limit}`);
    let rows: { id: string; identity: string }[];
    try {
      rows = await tx.query(
        `INSERT INTO test_cases (project_id, identity, external_id, suite, name)
         SELECT $1, identity, external_id, suite, name
           FROM unnest($2::uuid[], $3::varchar[], $4::varchar[], $5::varchar[]) AS t(identity, external_id, suite, name)
          ORDER BY identity
         ${skipStored ? 'ON CONFLICT (project_id, identity) DO NOTHING' : ''}
         RETURNING id, identity`,
        params,
      );
    } catch (error) {
      const steppedBack = stepBack && isLockTimeout(error);
      const retry = steppedBack || (isUniqueViolation(error) ? !skipStored : isDeadlock(error));
      if (!retry || (!steppedBack && tries >= DEADLOCK_TRIES)) {
        throw error;
      }
      // Also ends the timeout (a setting made under a savepoint is undone with it).
      await tx.query('ROLLBACK TO SAVEPOINT test_cases_insert');
      skipStored = true;
      if (steppedBack) {
        longest ??= await statementTimeoutMs(tx);
        if (longest > 0 && Date.now() - waitingSince >= longest) {
          // A lock not granted in time: the request answers 503, retry (all-exceptions.filter.ts).
          throw error;
        }
        // The writer waiting for what was let go takes it meanwhile.
        await delay(STEP_BACK_PAUSE_MS);
      }
      continue;
    }
    await tx.query(
      `RELEASE SAVEPOINT test_cases_insert${stepBack ? '; SET LOCAL lock_timeout TO DEFAULT' : ''}`,
    );
    return rows.map((r) => ({ id: String(r.id), identity: r.identity }));
  }
}

/** The transaction's statement_timeout, in milliseconds (0: none). Read once a writer steps back (a rare path). */
async function statementTimeoutMs(tx: Pick<EntityManager, 'query'>): Promise<number> {
  const [{ ms }]: { ms: number }[] = await tx.query(
    `SELECT setting::int AS ms FROM pg_settings WHERE name = 'statement_timeout'`,
  );
  return ms;
}

/**
 * How often insertTestCases tries its statement: each deadlock lets the other transaction go on, but a writer that
 * waits for the new tests of one inserting batch after batch (an import) may be picked at several of its batches (a
 * CI run gave up at five, with three writers of the same 400 new tests at once).
 */
const DEADLOCK_TRIES = 20;

/** The most projects ResultsWriter remembers as having new tests lately (all forgotten past it: only a guess). */
const NEW_TESTS_PROJECTS = 10_000;

/** The fewest tests not in the cache that ResultsWriter guesses new without a lookup, or learns the guess from. */
const GUESS_MIN = 100;

/**
 * How long a writer of one batch waits for a new test another transaction inserted before it steps back (see
 * insertTestCases): well under PostgreSQL's deadlock_timeout, so that it lets go before the other's look for a deadlock.
 */
const STEP_BACK_MS = 200;
/** How long it pauses then, its statement rolled back, before it tries again. */
const STEP_BACK_PAUSE_MS = 20;

/** Result ids a whole-run writer takes at a time (see openRun). */
const ID_BLOCK = 10_000;

const COLUMNS =
  'id, run_id, project_id, test_id, uuid, name, suite, status, duration_ms, message, trace, started_at, attributes, retry';
/** COLUMNS with those of outcomes: left out (their defaults: an outcome, one attempt) when every row is a lone attempt. */
const OUTCOME_COLUMNS = `${COLUMNS}, outcome, attempts, other_statuses`;

/** Per row, as AttemptPlan.rows; or, for the import's rows, whether each is its test's first row so far. */
type RowOutcomes = AttemptPlan['rows'] | boolean[];

/**
 * The COPY lines (COLUMNS, or OUTCOME_COLUMNS with `outcomes`) of `items[indexes[k]]` with result id `ids[k]`,
 * encoded as they are built.
 */
function resultRows(
  run: RunRef,
  items: ResultInput[],
  indexes: number[],
  ids: string[],
  testIds: string[],
  outcomes?: RowOutcomes,
): CopyText {
  const runId = copyField(run.id);
  const projectId = copyField(run.projectId);
  const text = new CopyText();
  for (let k = 0; k < indexes.length; k++) {
    const index = indexes[k];
    const r = items[index];
    text.add(
      ids[k] +
        '\t' +
        runId +
        '\t' +
        projectId +
        '\t' +
        testIds[index] +
        '\t' +
        copyField(r.uuid) +
        '\t' +
        copyField(r.name) +
        '\t' +
        copyField(r.suite ?? '') +
        '\t' +
        r.status +
        '\t' +
        (r.durationMs === undefined ? '\\N' : Math.round(r.durationMs)) +
        '\t' +
        copyField(r.message) +
        '\t' +
        copyField(r.trace) +
        '\t' +
        (r.startedAt ? new Date(r.startedAt).toISOString() : '\\N') +
        '\t' +
        (r.attributes ? copyField(JSON.stringify(r.attributes)) : '{}') +
        '\t' +
        (r.retry ?? 0) +
        (outcomes ? outcomeFields(outcomes[k]) : '') +
        '\n',
    );
  }
  return text;
}

function outcomeFields(row: RowOutcomes[number]): string {
  if (typeof row === 'boolean') {
    return row ? '\tt\t1\t0' : '\tf\t1\t0';
  }
  return `\t${row.outcome ? 't' : 'f'}\t${row.attempts}\t${row.otherStatuses}`;
}

/** How often a batch that met stored attempts of its tests is tried again when a concurrent writer got in between. */
const MAX_TRIES = 5;

/**
 * The one write path of every ingest surface (V1, V2, Import), inside the caller's transaction: the batch's
 * test cases are looked up (and the new ones inserted), the results are COPYed in with ids taken from the
 * table's sequence beforehand, and the run's counts are incremented atomically. Results with UUIDs stay
 * idempotent: a repeat within the batch is dropped, and one already stored makes the COPY fail on the unique
 * index, after which the batch goes through a staging table and `ON CONFLICT (project_id, uuid) DO NOTHING`.
 */
@Injectable()
export class ResultsWriter {
  private readonly testCaseCache = new TestCaseIdCache(200_000);
  // The transactions that have written test cases (inserted or renamed), held until their commit: such a writer must
  // not step back from an insert (see insertTestCases). A V2 delivery writes several runs in one transaction.
  private readonly holdingTestCases = new WeakSet<object>();
  // The projects whose last lookup of at least GUESS_MIN tests not in the cache found none of them, or whose tests
  // inserted without a lookup since were all new. Such a project's next GUESS_MIN or more tests not in the cache go
  // straight to the INSERT: a batch of 1,000 new tests saves the lookup's statement (1,000 index probes that find
  // nothing, ~4.5 ms of PostgreSQL time, and its 1,000 identities sent). A wrong guess (tests another replica
  // created, or the cache forgot) costs that batch an INSERT rolled back at its first stored test and one with ON
  // CONFLICT DO NOTHING (insertTestCases), then the lookup, and ends the guess. Never guessed: tests with an explicit
  // testId (never cached, so most often known). That also keeps a guessed INSERT from waiting where the lookup would
  // not: the one change made to a stored test case is a rename, of a test with an explicit testId (an INSERT of its
  // identity would wait for the renaming transaction), so what a guessed INSERT can wait for is another transaction
  // inserting the same new test, which the INSERT after a lookup waits for as well.
  private readonly newTestsOf = new Set<string>();

  constructor(private readonly observers: ResultsObservers) {}

  async write(tx: EntityManager, run: RunRef, items: ResultInput[]): Promise<WriteOutcome> {
    if (!items.length) {
      return { ids: [], counts: await this.counts(tx, run.id), learned: [], formatStripped: 0 };
    }
    const formatStripped = stripFormatCharactersOf(items);
    const learned: LearnedTestCase[] = [];
    await this.guardTestCases(tx, run.projectId);
    const created = new Set<string>();
    const testIds = await this.testCaseIds(tx, run.projectId, items, learned, (id) => created.add(id));
    const withUuids = items.some((r) => r.uuid);
    // Inputs to store: all, less repeats of a UUID that came earlier in the batch.
    const fresh = withUuids ? firstOfEachUuid(items) : items.map((_, i) => i);
    const ids = await this.allocateIds(tx, fresh.length);
    const attempts = fresh.map((index, k) => attemptOf(items[index], ids[k], testIds[index]));

    // The rule: new UUIDs, and tests without an attempt stored in the run yet. Then the batch is one COPY, and the
    // unique indexes (UUID; one outcome a run and test) say when it is not so.
    const plan = planAttempts(attempts, new Map());
    const text = resultRows(run, items, fresh, ids, testIds, plan.repeats ? plan.rows : undefined);
    let written: Written | undefined;
    await tx.query('SAVEPOINT results_copy');
    try {
      await copyIn(tx, `COPY results (${plan.repeats ? OUTCOME_COLUMNS : COLUMNS}) FROM STDIN`, text);
      await tx.query('RELEASE SAVEPOINT results_copy');
      written = { stored: ids, delta: plan.delta, outcomes: plan.outcomes };
    } catch (error) {
      if (!isUniqueViolation(error)) {
        throw error;
      }
      await tx.query('ROLLBACK TO SAVEPOINT results_copy');
    } finally {
      text.release();
    }
    written ??= await this.writeAgainstStored(tx, run, items, fresh, ids, testIds, attempts);

    const storedIds: (string | null)[] = items.map(() => null);
    const batch: StoredResult[] = [];
    fresh.forEach((index, k) => {
      const id = written.stored[k];
      storedIds[index] = id;
      if (id !== null) {
        batch.push({ id, testId: testIds[index], input: items[index] });
      }
    });
    // Derived state, in this transaction, before the run's row is locked by the counts (held to the commit).
    await this.observers.resultsStored(run, batch)?.(tx);
    const afterCommit = await this.observers.outcomesSettled(
      tx,
      run,
      created.size
        ? written.outcomes.map((o) => (created.has(o.testId) ? { ...o, created: true } : o))
        : written.outcomes,
    );
    const { counts, finished } = await this.addCounts(tx, run.id, written.delta);
    return { ids: storedIds, counts, learned, formatStripped, afterCommit, runFinished: finished };
  }

  /**
   * The batch again, when its COPY met a stored UUID or a stored attempt of one of its tests (a client retrying,
   * a redelivered message, a retry sent in a later batch, a concurrent writer): the results whose UUIDs are
   * stored are skipped; the stored outcomes of the batch's tests are row-locked (in test order, so two writers
   * cannot deadlock on them) and weighed against the new attempts; the outcomes that change are updated and the
   * rest is COPYed, under a savepoint. A concurrent writer that stores an attempt of the same tests or a UUID
   * in between makes the COPY fail again (it waits for that writer first), and the batch is weighed again.
   * Returns the ids stored (null where skipped) and what the batch adds to the counts.
   */
  private async writeAgainstStored(
    tx: EntityManager,
    run: RunRef,
    items: ResultInput[],
    fresh: number[],
    ids: string[],
    testIds: string[],
    attempts: Attempt[],
  ): Promise<Written> {
    for (let tries = 1; ; tries++) {
      let keep = fresh.map((_, k) => k);
      if (items.some((r) => r.uuid)) {
        const uuids = fresh.flatMap((index) => (items[index].uuid ? [items[index].uuid.toLowerCase()] : []));
        const known: { uuid: string }[] = await tx.query(
          `SELECT r.uuid FROM unnest($2::uuid[]) AS k(uuid)
             CROSS JOIN LATERAL (SELECT uuid FROM results WHERE project_id = $1 AND uuid = k.uuid LIMIT 1) r`,
          [run.projectId, uuids],
        );
        const storedUuids = new Set(known.map((r) => r.uuid));
        keep = keep.filter((k) => !storedUuids.has(items[fresh[k]].uuid?.toLowerCase() ?? ''));
      }
      const stored: (string | null)[] = fresh.map(() => null);
      if (!keep.length) {
        return { stored, delta: noRunCounts(), outcomes: [] };
      }
      const outcomes = await this.storedOutcomes(tx, run.id, [
        ...new Set(keep.map((k) => attempts[k].testId)),
      ]);
      const plan = planAttempts(
        keep.map((k) => attempts[k]),
        outcomes,
      );
      const text = resultRows(
        run,
        items,
        keep.map((k) => fresh[k]),
        keep.map((k) => ids[k]),
        testIds,
        plan.rows,
      );
      await tx.query('SAVEPOINT results_copy');
      try {
        if (plan.updates.length) {
          // Demoted outcomes first: the new outcome of the same test must not meet them in the unique index.
          await tx.query(
            // Stored outcomes, by test and run (uq_results_test_run_outcome): results have no index on id alone.
            `UPDATE results r SET outcome = u.outcome, attempts = u.attempts, other_statuses = u.other_statuses
               FROM unnest($1::bigint[], $2::boolean[], $3::int[], $4::smallint[], $5::bigint[])
                    AS u(id, outcome, attempts, other_statuses, test_id)
              WHERE r.test_id = u.test_id AND r.run_id = $6 AND r.outcome AND r.id = u.id`,
            [
              plan.updates.map((u) => u.id),
              plan.updates.map((u) => u.outcome),
              plan.updates.map((u) => u.attempts),
              plan.updates.map((u) => u.otherStatuses),
              plan.updates.map((u) => u.testId),
              run.id,
            ],
          );
        }
        await copyIn(tx, `COPY results (${OUTCOME_COLUMNS}) FROM STDIN`, text);
        await tx.query('RELEASE SAVEPOINT results_copy');
      } catch (error) {
        if (!isUniqueViolation(error) || tries >= MAX_TRIES) {
          throw error;
        }
        await tx.query('ROLLBACK TO SAVEPOINT results_copy');
        continue;
      } finally {
        text.release();
      }
      keep.forEach((k) => (stored[k] = ids[k]));
      return { stored, delta: plan.delta, outcomes: plan.outcomes };
    }
  }

  /** The stored outcomes of these tests in the run, row-locked until the commit. */
  private async storedOutcomes(
    tx: EntityManager,
    runId: string,
    testIds: string[],
  ): Promise<Map<string, StoredOutcome>> {
    testIds.sort((a, b) => (a.length !== b.length ? a.length - b.length : a < b ? -1 : 1));
    const rows: {
      id: string;
      test_id: string;
      status: ResultStatus;
      retry: number;
      started_at: Date | null;
      attempts: number;
      other_statuses: number;
    }[] = await tx.query(
      `SELECT r.id, r.test_id, r.status, r.retry, r.started_at, r.attempts, r.other_statuses
         FROM unnest($2::bigint[]) WITH ORDINALITY AS k(test_id, n)
         JOIN results r ON r.run_id = $1 AND r.test_id = k.test_id AND r.outcome
        ORDER BY k.n
          FOR UPDATE OF r`,
      [runId, testIds],
    );
    return new Map(
      rows.map((r) => [
        String(r.test_id),
        {
          id: String(r.id),
          testId: String(r.test_id),
          status: r.status,
          retry: r.retry,
          startedAt: r.started_at ? r.started_at.getTime() : null,
          attempts: r.attempts,
          otherStatuses: r.other_statuses,
        },
      ]),
    );
  }

  /**
   * A whole run written batch after batch inside one transaction (an import; results without UUIDs). While one
   * batch is COPYed on the transaction's connection, the next is prepared: its test cases (on that connection,
   * queued behind the COPY, when they are not cached), its result ids (from a reserve taken ahead on that
   * connection) and its COPY text. So PostgreSQL stores while Node parses
   * and encodes, and a batch waits only for the COPY before it. One `add` at a time; `finish` waits for the
   * last COPY, adds the counts to the run, and gives the test cases learned (at most `keepLearned`) to
   * `remember` after the commit. On failure, `settled` waits for the COPY in flight before the rollback.
   */
  openRun(tx: EntityManager, run: RunRef, keepLearned: number): RunWriter {
    const counts = noRunCounts();
    const learned: LearnedTestCase[] = [];
    let formatStripped = 0;
    // Attempts: nobody else writes this run before the commit, so a test's first row is stored as its outcome and
    // any later row of it as a further attempt; the tests with several rows are set right once, at the finish.
    // (Test ids as numbers: small integers, held as such by a Set.)
    // Each test of the run so far, with its first status (its outcome, unless it was repeated) and whether this
    // run's transaction inserted its test case (no state derived from it exists yet: see TestOutcome), as one
    // small integer (FirstSeen): a report of 1,000,000 tests holds one entry a test, not three.
    const first = new Map<number, number>();
    const repeated = new Set<number>();
    // The test cases the batch being added inserted (a test case is inserted by the batch that first meets it).
    let batchCreated = new Set<number>();
    const addCreated = (id: string) => batchCreated.add(Number(id));
    // With repeatsAreTests: how many tests of one suite and name the run has so far, for those with more than one.
    const occurrences = new Map<number, number>();
    let firstId: string | undefined;
    // Once per transaction: the shared lock lasts until the commit (see guardTestCases).
    let guarded: Promise<void> | undefined;
    // The last COPY queued, and the one before it: at most one runs and one waits, and a batch's own results
    // are let go as soon as its text is built (a batch kept until the COPY before it ended outlived two young
    // collections and was promoted: ~90 MB of garbage in the old generation per 50 MB report).
    let last: Promise<void> = Promise.resolve();
    let beforeLast: Promise<void> = Promise.resolve();
    // Result ids, taken ahead in blocks on the transaction's own connection (a second, pooled connection per
    // import could starve the pool: imports holding every connection, each waiting for one more). The next block
    // is asked for while half of this one is left, so it is there, queued behind a COPY, before it is needed.
    const reserve: string[] = [];
    let nextBlock: Promise<string[]> | undefined;
    const takeIds = async (n: number): Promise<string[]> => {
      while (reserve.length < n) {
        const block = await (nextBlock ?? nextIds(tx, 'results_id_seq', Math.max(n, ID_BLOCK)));
        nextBlock = undefined;
        reserve.push(...block);
      }
      const ids = reserve.splice(0, n);
      if (!nextBlock && reserve.length < ID_BLOCK / 2) {
        nextBlock = nextIds(tx, 'results_id_seq', ID_BLOCK);
        // Awaited by the next take; no unhandled rejection meanwhile.
        nextBlock.catch(() => undefined);
      }
      return ids;
    };
    return {
      add: async (items, repeatsAreTests = false) => {
        if (items.some((r) => r.uuid)) {
          throw new Error('A run writer takes results without UUIDs');
        }
        await beforeLast;
        formatStripped += stripFormatCharactersOf(items);
        const batchLearned: LearnedTestCase[] = [];
        batchCreated = new Set<number>();
        let testIds: string[];
        let ids: string[];
        try {
          await (guarded ??= this.guardTestCases(tx, run.projectId));
          // New test cases are inserted under a savepoint, which must not span a COPY of results: they wait for
          // those (the known ones are looked up behind the COPY in flight).
          testIds = await this.testCaseIds(tx, run.projectId, items, batchLearned, addCreated, () => last);
          if (repeatsAreTests) {
            await this.separateRepeats(
              tx,
              run.projectId,
              items,
              testIds,
              first,
              occurrences,
              addCreated,
              () => last,
            );
          }
          ids = await takeIds(items.length);
        } catch (error) {
          // A statement after a failed COPY fails as "transaction is aborted": the COPY's error is the one to tell.
          await last;
          throw error;
        }
        for (let i = 0; i < batchLearned.length && learned.length < keepLearned; i++) {
          learned.push(batchLearned[i]);
        }
        firstId ??= ids[0];
        let firsts: boolean[] | undefined;
        counts.attempts += items.length;
        for (let i = 0; i < items.length; i++) {
          const testId = Number(testIds[i]);
          if (!first.has(testId)) {
            first.set(testId, firstSeen(items[i].status, batchCreated.has(testId)));
            countOutcome(counts, items[i].status, 0, 1);
          } else {
            repeated.add(testId);
            firsts ??= items.map(() => true);
            firsts[i] = false;
          }
        }
        const text = resultRows(
          run,
          items,
          items.map((_, i) => i),
          ids,
          testIds,
          firsts,
        );
        const columns = firsts ? OUTCOME_COLUMNS : COLUMNS;
        const work = this.observers.wantResults
          ? this.observers.resultsStored(
              run,
              items.map((input, i) => ({ id: ids[i], testId: testIds[i], input })),
            )
          : undefined;
        beforeLast = last;
        last = last
          .then(() => copyIn(tx, `COPY results (${columns}) FROM STDIN`, text))
          .then(() => text.release())
          .then(() => work?.(tx));
        // Awaited by a later add or by finish; no unhandled rejection meanwhile.
        last.catch(() => undefined);
        return { ...counts };
      },
      finish: async () => {
        await last;
        const settled = repeated.size
          ? await this.settleAttempts(tx, run.id, [...repeated], firstId!)
          : { delta: noRunCounts(), outcomes: [] };
        addUp(counts, settled.delta);
        let afterCommit: AfterCommit[] = [];
        if (this.observers.wantOutcomes) {
          for (const o of settled.outcomes) {
            if ((first.get(Number(o.testId)) ?? 0) & FIRST_CREATED) {
              o.created = true;
            }
          }
          // The others as two typed arrays, each outcome made when an observer reads its slice.
          const testIds = new Float64Array(first.size - repeated.size);
          const codes = new Uint8Array(testIds.length);
          let n = 0;
          for (const [testId, code] of first) {
            if (!repeated.has(testId)) {
              testIds[n] = testId;
              codes[n++] = code;
            }
          }
          first.clear();
          afterCommit = await this.observers.outcomesSettled(
            tx,
            run,
            outcomeList(settled.outcomes, testIds, codes),
          );
        }
        // The import's own run, created by its transaction: nobody else finishes it.
        const added = await this.addCounts(tx, run.id, counts);
        return { counts: added.counts, learned, formatStripped, afterCommit };
      },
      settled: () => last.catch(() => undefined),
    };
  }

  /**
   * The second and later tests of one suite and name in a run whose format lists attempts in one element (JUnit's
   * parametrised cases with equal names, say): each gets a test case of its own, by an explicit id made of its
   * place among them (`#2 …`, `#3 …`), so that the same report imported again maps each to the same test case.
   * A result with a retry above 0 is a further attempt of the element before it of that suite and name, which its
   * parser wrote out (Surefire's rerun elements, CTRF's retries): it goes to that element's test case.
   */
  private async separateRepeats(
    tx: EntityManager,
    projectId: string,
    items: ResultInput[],
    testIds: string[],
    seen: Pick<ReadonlySet<number>, 'has'>,
    occurrences: Map<number, number>,
    created: (id: string) => void,
    beforeSavepoint: () => Promise<void>,
  ): Promise<void> {
    const inBatch = new Set<number>();
    // The items given an explicit id (`#n`), each with its input as renamed (`renamed[k]` is `items[again[k]]`): the
    // batch's repeats, and the attempts of an earlier batch's latest repeat.
    const again: number[] = [];
    const renamed: ResultInput[] = [];
    // The attempts of this batch's repeats: the item, and the index of its element in `renamed`.
    const attempts: [item: number, element: number][] = [];
    // The latest element of each test of the batch, as its index in `renamed` (-1: the test's own, not renamed).
    const latest = new Map<number, number>();
    for (let i = 0; i < items.length; i++) {
      const testId = Number(testIds[i]);
      const met = seen.has(testId) || inBatch.has(testId);
      if (met && (items[i].retry ?? 0) > 0) {
        const element = latest.get(testId);
        const n = occurrences.get(testId) ?? 1;
        if (element !== undefined && element >= 0) {
          attempts.push([i, element]);
        } else if (element === undefined && n > 1) {
          // Of the latest repeat of an earlier batch.
          again.push(i);
          renamed.push({ ...items[i], testId: `#${n} ${testIdentity(items[i])}` });
        }
        continue;
      }
      if (met) {
        const n = (occurrences.get(testId) ?? 1) + 1;
        occurrences.set(testId, n);
        latest.set(testId, renamed.length);
        again.push(i);
        renamed.push({ ...items[i], testId: `#${n} ${testIdentity(items[i])}` });
      } else {
        inBatch.add(testId);
        latest.set(testId, -1);
      }
    }
    if (!again.length) {
      return;
    }
    const separate = await this.testCaseIds(tx, projectId, renamed, [], created, beforeSavepoint);
    again.forEach((i, k) => (testIds[i] = separate[k]));
    for (const [i, element] of attempts) {
      testIds[i] = separate[element];
    }
  }

  /**
   * Keeps the test case ids of committed writes, so the next batches of the same tests skip the lookup, and runs
   * the observers' work after the commit (AfterCommit). Only after the commit: an id from a transaction that rolled
   * back would name a test case that does not exist, and its events would tell of results that are not there.
   */
  remember(outcomes: Pick<WriteOutcome, 'learned' | 'afterCommit'>[]): void {
    for (const outcome of outcomes) {
      for (const { projectId, suite, name, id } of outcome.learned) {
        this.testCaseCache.set(projectId, suite, name, id);
      }
    }
    for (const outcome of outcomes) {
      for (const then of outcome.afterCommit ?? []) {
        then();
      }
    }
  }

  /** Ids for the batch from the results' identity sequence, rising in input order. */
  private allocateIds(tx: EntityManager, n: number): Promise<string[]> {
    return nextIds(tx, 'results_id_seq', n);
  }

  /**
   * Keeps the retention service from deleting the project's test cases while this transaction may store results
   * for them (see test-case-guard.ts), and makes the cache forget the project's ids when some were deleted since it
   * learned them.
   */
  private async guardTestCases(tx: EntityManager, projectId: string): Promise<void> {
    this.testCaseCache.pruned(projectId, await lockTestCasesShared(tx, projectId));
  }

  /**
   * The test case of every identity in the batch, inserting the new ones. The common case (CI runs the same
   * tests again) is the cache, or one indexed lookup, and no write. A test with an explicit testId takes the suite
   * and name it was last reported with. The tests the lookup did not find are inserted by one statement (see
   * insertTestCases), whose ids are added to `created`: the test cases this transaction made. In a project whose
   * tests lately were all new (newTestsOf), the tests not in the cache are inserted without a lookup first, and only
   * those the INSERT found stored are looked up.
   */
  private async testCaseIds(
    tx: EntityManager,
    projectId: string,
    items: ResultInput[],
    learned: LearnedTestCase[],
    /** Told the id of each test case this call inserted. */
    created?: (id: string) => void,
    /** Resolves when the connection may take a savepoint (see openRun). */
    beforeSavepoint?: () => Promise<void>,
  ): Promise<string[]> {
    const testIds: string[] = new Array<string>(items.length);
    // The tests not in the cache, by identity: the last result of a test decides its suite and name.
    const latest = new Map<string, ResultInput>();
    const wanted = new Map<string, number[]>();
    for (let i = 0; i < items.length; i++) {
      const item = items[i];
      // A test with an explicit testId is always looked up: its suite and name may have changed.
      const cached = item.testId ? undefined : this.testCaseCache.get(projectId, item.suite ?? '', item.name);
      if (cached) {
        testIds[i] = cached;
        continue;
      }
      const identity = testIdentity(item);
      latest.set(identity, item);
      const indexes = wanted.get(identity);
      if (indexes) {
        indexes.push(i);
      } else {
        wanted.set(identity, [i]);
      }
    }
    if (!latest.size) {
      return testIds;
    }
    const ids = new Map<string, string>();
    const renamed: { id: string; item: ResultInput }[] = [];
    const lookUp = async (keys: string[]) => {
      // One index probe per key by construction (LATERAL … LIMIT 1): with `identity = ANY($2)`, the planner,
      // going by the statistics of a table that had just grown, scanned all of the project's test cases. The
      // project is checked on the row found (`+ 0`: not an index condition), so that only uq_test_cases_identity,
      // which leads with the identity, answers the probe: given `project_id = $1`, the planner took the order index
      // (project first) whenever it thought the project small, and looked for each identity among all of the
      // project's test cases (see migration TestCaseIdentityFirst).
      const found: { id: string; identity: string; suite: string; name: string }[] = await tx.query(
        `SELECT t.id, t.identity, t.suite, t.name FROM unnest($2::uuid[]) AS k(identity)
           CROSS JOIN LATERAL (SELECT id, identity, suite, name FROM test_cases
                                WHERE identity = k.identity AND project_id + 0 = $1 LIMIT 1) t`,
        [projectId, keys],
      );
      for (const row of found) {
        const item = latest.get(row.identity)!;
        ids.set(row.identity, String(row.id));
        if (row.suite !== (item.suite ?? '') || row.name !== item.name) {
          renamed.push({ id: String(row.id), item });
        }
      }
    };
    const keys = [...latest.keys()];
    // The project's last lookup found none of its tests (a new suite's first run, a first import): these are most
    // likely new too, and the INSERT's unique index tells which are not, so the lookup is left out (newTestsOf).
    const guessable = keys.length >= GUESS_MIN && !keys.some((k) => latest.get(k)!.testId);
    const guessedNew = guessable && this.newTestsOf.has(projectId);
    let missing = keys;
    if (!guessedNew) {
      await lookUp(keys);
      missing = keys.filter((k) => !ids.has(k));
      if (guessable && missing.length === keys.length) {
        if (this.newTestsOf.size >= NEW_TESTS_PROJECTS) {
          this.newTestsOf.clear();
        }
        this.newTestsOf.add(projectId);
      }
    }
    if (missing.length) {
      await beforeSavepoint?.();
      // Only a writer of one batch (no savepoint to wait for: write) holding no test case of its own steps back.
      const stepBack = !beforeSavepoint && !this.holdingTestCases.has(tx);
      const inserted = await insertTestCases(tx, projectId, missing, latest, stepBack);
      if (inserted.length) {
        this.holdingTestCases.add(tx);
      }
      for (const r of inserted) {
        ids.set(r.identity, r.id);
        created?.(r.id);
      }
      // Stored already (the guess was wrong), or inserted meanwhile by a concurrent writer (committed, so visible to
      // a new statement).
      if (inserted.length < missing.length) {
        await lookUp(missing.filter((k) => !ids.has(k)));
        this.newTestsOf.delete(projectId);
      }
    }
    for (const [identity, indexes] of wanted) {
      const id = ids.get(identity)!;
      indexes.forEach((i) => (testIds[i] = id));
      // Tests with an explicit testId are not cached (see above); an identity is one or the other.
      const item = items[indexes[0]];
      if (!item.testId) {
        learned.push({ projectId, suite: item.suite ?? '', name: item.name, id });
      }
    }
    if (renamed.length) {
      renamed.sort((a, b) => (BigInt(a.id) < BigInt(b.id) ? -1 : 1));
      await tx.query(
        `UPDATE test_cases t SET suite = u.suite, name = u.name
           FROM unnest($1::bigint[], $2::varchar[], $3::varchar[]) AS u(id, suite, name)
          WHERE t.id = u.id`,
        [renamed.map((r) => r.id), renamed.map((r) => r.item.suite ?? ''), renamed.map((r) => r.item.name)],
      );
      this.holdingTestCases.add(tx);
    }
    return testIds;
  }

  /**
   * The outcome of each of `testIds` in a run written whole (see openRun), where each test's first row was stored
   * as its outcome: the last attempt becomes the outcome, with the number of attempts and the other statuses.
   * Reads only these tests' rows of the run, by test and run: outcomes and earlier attempts apart, as each kind has
   * its index (uq_results_test_run_outcome, ix_results_test_attempts).
   * Returns the change to the counts that took each first row as its test's outcome, and these tests' outcomes.
   */
  private async settleAttempts(
    tx: EntityManager,
    runId: string,
    testIds: number[],
    firstId: string,
  ): Promise<{ delta: RunCounts; outcomes: TestOutcome[] }> {
    const rows: {
      test_id: string;
      first_id: string;
      last_id: string;
      first_status: ResultStatus;
      last_status: ResultStatus;
      attempts: number;
      other_statuses: number;
    }[] = await tx.query(
      `WITH a AS (
         SELECT id, test_id, status, outcome, row_number() OVER (PARTITION BY test_id ORDER BY ${LAST_ATTEMPT_FIRST}) AS n
           FROM (SELECT id, test_id, status, outcome, retry, started_at FROM results
                  WHERE test_id = ANY($2::bigint[]) AND run_id = $1 AND outcome AND id >= $3
                 UNION ALL
                 SELECT id, test_id, status, outcome, retry, started_at FROM results
                  WHERE test_id = ANY($2::bigint[]) AND run_id = $1 AND NOT outcome AND id >= $3) t)
       SELECT test_id, max(id) FILTER (WHERE outcome) AS first_id, max(id) FILTER (WHERE n = 1) AS last_id,
              min(status) FILTER (WHERE outcome) AS first_status, min(status) FILTER (WHERE n = 1) AS last_status,
              count(*)::int AS attempts, coalesce(bit_or(${STATUS_BIT_SQL('status')}) FILTER (WHERE n > 1), 0)::int AS other_statuses
         FROM a GROUP BY test_id`,
      [runId, testIds, firstId],
    );
    const delta = noRunCounts();
    const demoted = rows.filter((r) => String(r.first_id) !== String(r.last_id));
    for (const r of rows) {
      countOutcome(delta, r.first_status, 0, -1);
      countOutcome(delta, r.last_status, r.other_statuses, 1);
    }
    // By test, run and whether an outcome (the two indexes by test): results have no index on id alone. Demoted
    // first: the unique index of outcomes must not meet two of one test.
    if (demoted.length) {
      await tx.query(
        `UPDATE results r SET outcome = false FROM unnest($1::bigint[], $2::bigint[]) AS u(test_id, id)
          WHERE r.test_id = u.test_id AND r.run_id = $3 AND r.outcome AND r.id = u.id`,
        [demoted.map((r) => r.test_id), demoted.map((r) => r.first_id), runId],
      );
    }
    // A last attempt that was the first row is an outcome already; any other was stored as an earlier attempt.
    for (const outcome of [true, false]) {
      const last = rows.filter((r) => (String(r.first_id) === String(r.last_id)) === outcome);
      if (!last.length) {
        continue;
      }
      await tx.query(
        `UPDATE results r SET outcome = true, attempts = u.attempts, other_statuses = u.other_statuses
           FROM unnest($1::bigint[], $2::int[], $3::smallint[], $4::bigint[]) AS u(id, attempts, other_statuses, test_id)
          WHERE r.test_id = u.test_id AND r.run_id = $5 AND ${outcome ? '' : 'NOT '}r.outcome AND r.id = u.id`,
        [
          last.map((r) => r.last_id),
          last.map((r) => r.attempts),
          last.map((r) => r.other_statuses),
          last.map((r) => r.test_id),
          runId,
        ],
      );
    }
    return {
      delta,
      outcomes: rows.map((r) => ({
        testId: String(r.test_id),
        status: r.last_status,
        otherStatuses: r.other_statuses,
      })),
    };
  }

  /**
   * Also the guard that results only join a run that exists: the UPDATE row-locks the run until commit, so a
   * concurrent delete either waits for this batch (and its trigger then removes these results too) or has
   * already removed the run, and the batch fails. Answers the counts after it, and whether the run is finished as of
   * that lock (see WriteOutcome.runFinished): a finish waits for this batch, or this batch for the finish's commit.
   */
  private async addCounts(
    tx: EntityManager,
    runId: string,
    added: RunCounts,
  ): Promise<{ counts: RunCounts; finished: boolean }> {
    // TypeORM answers UPDATE … RETURNING with [rows, affected].
    const [updated]: [(Record<string, number> & { status: string })[], number] = await tx.query(
      `UPDATE runs SET count_total = count_total + $2, count_passed = count_passed + $3, count_failed = count_failed + $4,
                       count_broken = count_broken + $5, count_skipped = count_skipped + $6,
                       count_passed_on_retry = count_passed_on_retry + $7, count_attempts = count_attempts + $8
        WHERE id = $1
        RETURNING status, ${COUNT_COLUMNS}`,
      [
        runId,
        added.total,
        added.passed,
        added.failed,
        added.broken,
        added.skipped,
        added.passedOnRetry,
        added.attempts,
      ],
    );
    if (!updated.length) {
      throw AppError.notFound(`Run ${runId} not found`);
    }
    return { counts: toCounts(updated[0]), finished: updated[0].status === 'FINISHED' };
  }

  private async counts(tx: EntityManager, runId: string): Promise<RunCounts> {
    const rows: Record<string, number>[] = await tx.query(`SELECT ${COUNT_COLUMNS} FROM runs WHERE id = $1`, [
      runId,
    ]);
    return toCounts(rows[0]);
  }
}

/** What a batch stored: ids (null where skipped), the change to the run's counts, and its tests' outcomes after it. */
interface Written {
  stored: (string | null)[];
  delta: RunCounts;
  outcomes: TestOutcome[];
}

const COUNT_COLUMNS =
  'count_total, count_passed, count_failed, count_broken, count_skipped, count_passed_on_retry, count_attempts';

/** An input as an attempt of its test, stored under `id`. */
function attemptOf(r: ResultInput, id: string, testId: string): Attempt {
  return {
    id,
    testId,
    status: r.status,
    retry: r.retry ?? 0,
    startedAt: r.startedAt ? Date.parse(r.startedAt) : null,
  };
}

function toCounts(row: Record<string, number>): RunCounts {
  return {
    total: row.count_total,
    passed: row.count_passed,
    failed: row.count_failed,
    broken: row.count_broken,
    skipped: row.count_skipped,
    passedOnRetry: row.count_passed_on_retry,
    attempts: row.count_attempts,
  };
}

/** A test's first status in a whole run (its index in RESULT_STATUSES), with FIRST_CREATED when the run created it. */
const FIRST_CREATED = 8;

function firstSeen(status: ResultStatus, created: boolean): number {
  return RESULT_STATUSES.indexOf(status) | (created ? FIRST_CREATED : 0);
}

/**
 * A whole run's outcomes (see OutcomeList): `settled` (its repeated tests, weighed), then the tests met once, from
 * their ids and FirstSeen codes, made a slice at a time.
 */
function outcomeList(settled: TestOutcome[], testIds: Float64Array, codes: Uint8Array): OutcomeList {
  const length = settled.length + testIds.length;
  const make = (i: number): TestOutcome => {
    if (i < settled.length) {
      return settled[i];
    }
    const k = i - settled.length;
    const outcome: TestOutcome = {
      testId: String(testIds[k]),
      status: RESULT_STATUSES[codes[k] & ~FIRST_CREATED],
      otherStatuses: 0,
    };
    if (codes[k] & FIRST_CREATED) {
      outcome.created = true;
    }
    return outcome;
  };
  return {
    length,
    slice(start = 0, end = length) {
      const out: TestOutcome[] = [];
      for (let i = Math.max(0, start); i < Math.min(end, length); i++) {
        out.push(make(i));
      }
      return out;
    },
    *[Symbol.iterator]() {
      for (let i = 0; i < length; i++) {
        yield make(i);
      }
    },
  };
}
