import { Inject, Injectable, Optional } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import { AppError } from '../common/app-error.js';
import { flakyWindowSql } from '../common/project-settings.js';
import { CopyText, copyField, copyIn } from '../database/copy-in.js';
import { idArray } from '../database/id-array.js';
import { queryPrepared } from '../database/prepared.js';
import { FAILURE_BITS, STATUS_BITS } from '../results/attempts.js';
import type { ResultStatus } from '../results/entities.js';
import { NOT_PURGING } from '../results/runs.repository.js';
import { lockTestCasesShared } from '../results/test-case-guard.js';
import {
  type HealthState,
  type RunOutcome,
  type TestHealth,
  type WindowEntry,
  compareRuns,
  entryBits,
  failingSteadily,
  plainFailure,
  plainPass,
  skip,
  steady,
} from './flakiness.js';
import { logHealthChanges } from './health-changes.js';
import { windowBytes, windowEntries } from './health-recount.js';

/** A row of test_health as read (see migration TestHealth). */
interface HealthRow {
  test_id: string;
  win: Buffer;
  runs: number;
  /**
   * 0 until the test has run twice (migration TestHealthSecondRunHot), read as null then; NULL in a row a replica on
   * the code before wrote.
   */
  flake_rate: number | null;
  flaky: boolean;
  last_status: ResultStatus | null;
  last_run_id: string | null;
  first_seen_at: Date;
  last_failed_at: Date | null;
  state: HealthState;
  q_since: Date | null;
  q_reason: string | null;
  q_auto: boolean | null;
  q_by_user_id: string | null;
  q_until: Date | null;
  q_passes: number;
  q_pass_run: string | null;
  released_run: string | null;
}

const HEALTH_COLUMNS =
  'test_id, win, runs, flake_rate, flaky, last_status, last_run_id, first_seen_at, last_failed_at, state, ' +
  'q_since, q_reason, q_auto, q_by_user_id, q_until, q_passes, q_pass_run, released_run';

/** HEALTH_COLUMNS of the row `t`. */
const COLUMNS_OF_T = HEALTH_COLUMNS.split(', ')
  .map((c) => `t.${c}`)
  .join(', ');
/** HEALTH_COLUMNS of `h` but for the test id. */
const COLUMNS_OF_H = HEALTH_COLUMNS.split(', ')
  .filter((c) => c !== 'test_id')
  .map((c) => `h.${c}`)
  .join(', ');

/** A null for the version and each of HEALTH_COLUMNS. */
const NULLS_OF_H = HEALTH_COLUMNS.split(', ')
  .map(() => 'NULL')
  .concat('NULL')
  .join(', ');

/** NULLS_OF_H but for the test id's (the version's and COLUMNS_OF_H's). */
const NULLS_OF_H_BUT_ID = NULLS_OF_H.split(', ').slice(1).join(', ');

/**
 * The bytes of a window entry in `win` (see migration TestHealth): the run id (6 bytes), the bits (1), the stream
 * key (4), the commit key (4), big-endian.
 */
const ENTRY = 15;
const PASSED = STATUS_BITS.PASSED;
/** The largest run id 6 bytes hold. */
const MAX_RUN = 2 ** 48 - 1;

/** The outcome status of a window entry's bits (its high half: STATUS_BITS). */
function statusOfBits(bits: number): ResultStatus {
  const bit = bits >> 4;
  return bit === STATUS_BITS.PASSED ? 'PASSED' : bit === STATUS_BITS.BROKEN ? 'BROKEN' : 'FAILED';
}

/** A window as stored (read with a plain loop: the window is most of what a batch reads). */
function entriesOf(win: Buffer): WindowEntry[] {
  const entries: WindowEntry[] = new Array<WindowEntry>(win.length / ENTRY);
  for (let i = 0, at = 0; at < win.length; i++, at += ENTRY) {
    entries[i] = {
      run: String(win.readUIntBE(at, 6)),
      bits: win[at + 6],
      stream: String(win.readUInt32BE(at + 7)),
      commit: String(win.readUInt32BE(at + 11)),
    };
  }
  return entries;
}

/** Writes `entries` at `at` of `out`; answers where the next window starts. */
function writeEntries(out: Buffer, at: number, entries: readonly WindowEntry[]): number {
  for (const e of entries) {
    const run = Number(e.run);
    if (!(run <= MAX_RUN)) {
      throw new Error(`Run id ${e.run} does not fit a test's window (6 bytes)`);
    }
    out.writeUIntBE(run, at, 6);
    out[at + 6] = e.bits;
    out.writeUInt32BE(Number(e.stream), at + 7);
    out.writeUInt32BE(Number(e.commit), at + 11);
    at += ENTRY;
  }
  return at;
}

/**
 * The flake rate stored for `h`: 0 until the test has run twice, where the rules say none (migration
 * TestHealthSecondRunHot); toHealth reads it back as none. So a second plain pass changes nothing the row holds but its
 * window, run count and last run, and is quiet (see quietSql): the list reads the runs since (runs.repository.ts).
 */
function storedFlakeRate(h: TestHealth): number {
  return h.flakeRate ?? 0;
}

function toHealth(r: HealthRow): TestHealth {
  return {
    entries: entriesOf(r.win),
    runs: r.runs,
    flakeRate: r.runs >= 2 ? r.flake_rate : null,
    flaky: r.flaky,
    lastStatus: r.last_status,
    lastRunId: r.last_run_id,
    firstSeenAt: r.first_seen_at,
    lastFailedAt: r.last_failed_at,
    state: r.state,
    quarantine:
      r.q_since === null
        ? null
        : {
            since: r.q_since,
            reason: r.q_reason ?? '',
            auto: r.q_auto ?? false,
            byUserId: r.q_by_user_id,
            until: r.q_until,
          },
    passes: r.q_passes,
    passRun: r.q_pass_run,
    releasedRun: r.released_run,
  };
}

/** A test's health to store, and the health it had (absent: a person's change, every column written). */
export interface HealthWrite {
  testId: string;
  health: TestHealth;
  before?: TestHealth;
}

/** Whether the quarantine columns (q_*, released_run) of `w` differ from what it had. */
function quarantineChanged({ health: h, before: b }: HealthWrite): boolean {
  return (
    b === undefined ||
    h.quarantine !== b.quarantine ||
    h.passes !== b.passes ||
    h.passRun !== b.passRun ||
    h.releasedRun !== b.releasedRun
  );
}

/** Epoch milliseconds (a float8 array is sent as plain numbers; to_timestamp takes seconds). */
const ms = (d: Date | null | undefined): number | null => (d ? d.getTime() : null);

/**
 * The batch's windows as one bytea parameter (sent in binary, no escaping), each row's from its 1-based offset and
 * length: `substr($n, at, len)`.
 */
function windows(rows: readonly HealthWrite[]): { bytes: Buffer; at: number[]; len: number[] } {
  let total = 0;
  for (const r of rows) {
    total += r.health.entries.length * ENTRY;
  }
  const bytes = Buffer.allocUnsafe(total);
  const at: number[] = new Array<number>(rows.length);
  const len: number[] = new Array<number>(rows.length);
  let offset = 0;
  for (let i = 0; i < rows.length; i++) {
    at[i] = offset + 1;
    const end = writeEntries(bytes, offset, rows[i].health.entries);
    len[i] = end - offset;
    offset = end;
  }
  return { bytes, at, len };
}

/** The quarantine columns of `rows` as parallel arrays, in the order of QUARANTINE_RECORD. */
function quarantineArrays(rows: readonly HealthWrite[]): unknown[] {
  return [
    rows.map((r) => r.testId),
    rows.map((r) => ms(r.health.quarantine?.since)),
    rows.map((r) => r.health.quarantine?.reason ?? null),
    rows.map((r) => r.health.quarantine?.auto ?? null),
    rows.map((r) => r.health.quarantine?.byUserId ?? null),
    rows.map((r) => ms(r.health.quarantine?.until)),
    rows.map((r) => r.health.passes),
    rows.map((r) => r.health.passRun),
    rows.map((r) => r.health.releasedRun),
  ];
}

const QUARANTINE_RECORD = (first: number) =>
  `unnest($${first}::bigint[], $${first + 1}::float8[], $${first + 2}::text[], $${first + 3}::bool[], ` +
  `$${first + 4}::bigint[], $${first + 5}::float8[], $${first + 6}::int[], $${first + 7}::bigint[], ` +
  `$${first + 8}::bigint[]) AS q(test_id, since, reason, auto, by_user_id, until, passes, pass_run, released_run)`;

/**
 * A timestamptz as a COPY field (null as \\N), remembering the last one: a batch's new tests are all first seen (and
 * have failed) at its run's start, and toISOString took ~1.4 µs a row of insertNew, as much as the rest of the row's
 * text (a CPU profile of the bench's new tests).
 */
export function copyTimes(): (d: Date | null | undefined) => string {
  let ms = NaN;
  let text = '';
  return (d) => {
    if (!d) {
      return '\\N';
    }
    if (d.getTime() !== ms) {
      ms = d.getTime();
      text = d.toISOString();
    }
    return text;
  };
}
/** A boolean as a COPY field (null as \\N). */
const copyBool = (b: boolean | null | undefined): string =>
  b === null || b === undefined ? '\\N' : b ? 't' : 'f';

/** SQL for a timestamptz from epoch milliseconds (NULL stays NULL). */
const ts = (column: string) => `to_timestamp(${column} / 1000)`;

/**
 * What `read` answers: the quiet tests, the tests whose outcome it applied itself (`repeated`: see repeatsSql), and the
 * others' stored health with its version (a test without a row: none).
 */
export interface HealthRead {
  quiet: Set<string>;
  repeated: Set<string>;
  stored: Map<string, TestHealth>;
  versions: Map<string, string>;
}

/**
 * What `read` is told of each test's outcome, one byte a test (`outcomeCode`): a plain pass (flakiness.ts,
 * `plainPass`) or a plain failure (`plainFailure`) as its window entry bits (the outcome's status bit from bit 4 up:
 * 0x1_ for a pass, from 0x20 up for a failure), a skip (`skip`), or another outcome, to be weighed in Node.
 * Under a policy whose flip rate is 0 (any test that ran `minRuns` times is flaky by rule (c)), plain passes and
 * failures are other outcomes: a repeat is new evidence there, and every one is weighed.
 */
export const OUTCOME = { PLAIN_PASS: 0x11, SKIP: 2, OTHER: 3 } as const;
/** The least code of a plain failure (its entry bits; see OUTCOME). */
export const PLAIN_FAILURE = 0x20;

/** The code of an outcome for `read` (see OUTCOME) under a policy of flip rate `flipRate`. */
export function outcomeCode(o: Pick<RunOutcome, 'status' | 'otherStatuses'>, flipRate: number): number {
  return skip(o)
    ? OUTCOME.SKIP
    : flipRate > 0 && (plainPass(o) || plainFailure(o))
      ? entryBits(o.status, o.otherStatuses)
      : OUTCOME.OTHER;
}

/**
 * What `read` needs to apply a plain failure: the run's window entry but for the bits (the run id before them, the
 * stream and commit keys after), and the policy's window.
 */
export interface RunEntry {
  entryHead: Buffer;
  entryTail: Buffer;
  window: number;
}

/** The entry of run `run` (stream and commit keys as in WindowEntry) as `RunEntry` takes it. */
export function entryParts(
  run: string,
  stream: string,
  commit: string,
): { entryHead: Buffer; entryTail: Buffer } {
  const entry = Buffer.alloc(ENTRY);
  writeEntries(entry, 0, [{ run, bits: 0, stream, commit }]);
  return { entryHead: entry.subarray(0, 6), entryTail: entry.subarray(7) };
}

/**
 * Whether every entry of the window of row `t` has `bits & mask = value` (its bits: the byte after the run id; see
 * ENTRY). True for an empty window.
 */
const everyEntrySql = (t: string, mask: number, value: number) =>
  `NOT EXISTS (SELECT 1 FROM generate_series(6, length(${t}.win) - 1, ${ENTRY}) i
                WHERE get_byte(${t}.win, i) & ${mask} <> ${value})`;

/**
 * Whether the row `t` is failing steadily: every entry of its window failed, no outcome or attempt passed, it is
 * neither flaky nor quarantined, its last status is a failure and its last run is before the query's run ($3).
 */
const failingSteadilySql = (t: string) =>
  `${t}.q_since IS NULL AND NOT ${t}.flaky AND ${t}.last_status IN ('FAILED', 'BROKEN')
   AND ${t}.last_run_id < $3::bigint AND length(${t}.win) >= ${ENTRY}
   AND ${everyEntrySql(t, (PASSED << 4) | PASSED, 0)}`;

/** Whether the outcome code `code` is a plain pass's (see OUTCOME). */
const plainPassSql = (code: string) => `${code} >> 4 = ${PASSED}`;

/** The rows of a batch as the repeats' CTEs take them (see repeatsSql). */
interface RepeatsFrom {
  from: string;
  match: string;
  code: string;
  head: string;
  tail: string;
  window: string;
}

/**
 * Whether the row `t`, known failing steadily by a replica (settled-tests.ts), still is as far as its columns say:
 * every change that ends it is logged (stability.observer.ts), so its window is not checked again, entry by entry
 * (~10 µs a row of 30 entries, most of what applying a repeat cost); its columns catch a change committed since the
 * replica read the log.
 */
const knownFailingSql = (t: string) =>
  `${t}.q_since IS NULL AND NOT ${t}.flaky AND ${t}.last_status IN ('FAILED', 'BROKEN')
   AND ${t}.last_run_id < $3::bigint AND length(${t}.win) >= ${ENTRY}`;

/**
 * The runs of the row `t` since its stored last run and before the query's ($3), at most `window`: plain failures of a
 * test failing steadily that were not written (settled-tests.ts, LAG_MS), which its run count still lacks (its window
 * lacks their entries for good: its count, not its window's length, carries them on). One index range of its outcomes,
 * empty for a row that does not lag.
 */
const laggedRunsSql = (t: string, window: string) =>
  `(SELECT count(*)::int FROM (
      SELECT 1 FROM results r
       WHERE r.test_id = ${t}.test_id AND r.outcome AND r.status <> 'SKIPPED' AND r.run_id > ${t}.last_run_id
         AND r.run_id < $3::bigint AND r.${NOT_PURGING}
       LIMIT ${window}::int) l)`;

/**
 * The CTE `f` of repeatsSql (plain failures of tests failing steadily: `failing` says which rows are), also run alone
 * by `applyRepeats`.
 */
function failuresSql(k: RepeatsFrom, failing = failingSteadilySql('t')) {
  return `f AS (
  UPDATE test_health t
     SET win = substr(t.win || ${k.head}::bytea || set_byte('\\x00'::bytea, 0, ${k.code}) || ${k.tail}::bytea,
                      greatest(1, length(t.win) + ${ENTRY + 1} - ${k.window}::int * ${ENTRY})),
         runs = least(t.runs + 1 + ${laggedRunsSql('t', k.window)}, ${k.window}::int),
         flake_rate = 0,
         last_status = CASE ${k.code} >> 4 WHEN ${STATUS_BITS.BROKEN} THEN 'BROKEN' ELSE 'FAILED' END,
         last_run_id = $3::bigint, state = 'FAILING', first_seen_at = least(t.first_seen_at, $4),
         last_failed_at = greatest(t.last_failed_at, $4)
    FROM ${k.from}
   WHERE ${k.match} AND ${k.code} >= ${PLAIN_FAILURE} AND ${failing}
  RETURNING t.test_id)`;
}

/**
 * The batch as `readEach` and `applyRepeats` give it: the test ids ($1), each with its code as the byte of its place
 * ($2), the RunEntry's parts as $5 to $7.
 */
const EACH: RepeatsFrom = {
  from: 'unnest($1::bigint[]) WITH ORDINALITY AS k(id, n)',
  match: 't.test_id = k.id',
  code: 'get_byte($2::bytea, (k.n - 1)::int)',
  head: '$5',
  tail: '$6',
  window: '$7',
};

/**
 * The CTEs of `read`'s statements that apply the batch's repeats as flakiness.ts's applyOutcome would (an outcome
 * that repeats what the test did before), locking those rows as an update does:
 * - `f`: plain failures, to the tests failing steadily (`plainFailure` says why nothing else moves): the run's entry
 *   added to the window (trimmed to the policy's window), run count, last status and run, first seen and last failure
 *   (the run's start, $4);
 * - `sk`: skips, to the tests that never ran and are not quarantined (`skip`): last status and run, first seen (the
 *   other columns as the rules leave an empty window: no runs, no verdict, HEALTHY);
 * - `rep`: the tests of the two.
 * `from` gives each test of the batch a row `k`, which `match` joins to its row `t` and `code` reads its outcome's
 * code from (OUTCOME); `head`, `tail` and `window` are the parameters of RunEntry.
 */
function repeatsSql(k: RepeatsFrom) {
  return `${failuresSql(k)},
  sk AS (
  UPDATE test_health t
     SET last_status = 'SKIPPED', last_run_id = $3::bigint, runs = 0, flake_rate = 0, flaky = false,
         state = 'HEALTHY', first_seen_at = least(t.first_seen_at, $4)
    FROM ${k.from}
   WHERE ${k.match} AND ${k.code} = ${OUTCOME.SKIP} AND t.q_since IS NULL AND length(t.win) = 0
     AND t.last_run_id < $3::bigint
  RETURNING t.test_id),
  rep AS (SELECT test_id FROM f UNION ALL SELECT test_id FROM sk)`;
}

/** The codes of the tests `ids` (`codes`, see OUTCOME) as a byte an id of `lo`…`hi` (id `lo + k`: byte k; 0: none). */
function rangeCodes(ids: Float64Array, codes: readonly number[], lo: number, hi: number): Buffer {
  const bytes = Buffer.alloc(hi - lo + 1);
  for (let i = 0; i < ids.length; i++) {
    bytes[ids[i] - lo] = codes[i];
  }
  return bytes;
}

/**
 * The code of the row `t` in `readRange` (its byte of $5, the ids $1…$2), guarded: a plan may test it before the range.
 */
const RANGE_CODE =
  'CASE WHEN t.test_id BETWEEN $1 AND $2 THEN get_byte($5::bytea, (t.test_id - $1)::int) ELSE 0 END';

/** Tests read as one range of ids at least (fewer: a probe each). */
const RANGE_MIN = 32;
/** A batch's ids are read as one range when it spans fewer than this many ids a test. */
const RANGE_SPAN = 2;

/**
 * Whether the row `t` is quiet (see `read`) for a test whose outcome is a plain pass where `plain` is true; the query's
 * $3 is the run, $4 its start. A test that has run once is quiet too (its second plain pass makes its flake rate 0,
 * which is stored already: see storedFlakeRate), except for a row a replica on the code before stored without one,
 * and unless `minRuns` is 2 (HealthWriteOptions, `quietSecondRun` off: the second pass is weighed and written).
 */
const quietSql = (t: string, plain: string, minRuns: 1 | 2) =>
  `${plain} AND ${t}.q_since IS NULL AND NOT ${t}.flaky AND ${t}.last_status = 'PASSED' AND ${t}.runs >= ${minRuns}
   AND ${t}.flake_rate IS NOT NULL AND ${t}.last_run_id < $3::bigint AND ${t}.first_seen_at <= $4
   AND (${t}.last_failed_at IS NULL OR ${everyEntrySql(t, 0xf0 | FAILURE_BITS, PASSED << 4)})`;

/** How test health is written (SVC_HEALTH_QUIET_SECOND_RUN, README "Upgrading replicas one at a time"). */
export interface HealthWriteOptions {
  /**
   * Whether a test's second plain pass is quiet (not written: its row lags, as a steady test's does from then on).
   * Off while replicas on a release before it still write: they take a row of one run for one that is up to date, and
   * would weigh their next outcome of that test against a window without the passes in between.
   */
  quietSecondRun: boolean;
}

/** The provider of the options (stability.module.ts). */
export const HEALTH_WRITE_OPTIONS = Symbol('HealthWriteOptions');

/** An expired quarantine ended by the sweep. */
export interface ExpiredQuarantine {
  testId: string;
  projectId: string;
  auto: boolean;
}

/** test_health (see migration TestHealth): a test's window and health, read and written by test id. */
@Injectable()
export class TestHealthRepository {
  /** The fewest runs of a quiet row (quietSql). */
  private readonly quietFrom: 1 | 2;

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    @Optional() @Inject(HEALTH_WRITE_OPTIONS) options: HealthWriteOptions = { quietSecondRun: true },
  ) {
    this.quietFrom = options.quietSecondRun ? 1 : 2;
  }

  /** The stored health of these tests, row-locked until the commit, in test id order (no deadlock between writers). */
  async lock(tx: Pick<EntityManager, 'query'>, testIds: string[]): Promise<Map<string, TestHealth>> {
    const sorted = [...testIds].sort((a, b) =>
      a.length !== b.length ? a.length - b.length : a < b ? -1 : 1,
    );
    // One index probe a test (LATERAL): `test_id = ANY(…)` may be planned as a scan of a table that just grew.
    const rows: HealthRow[] = await tx.query(
      `SELECT h.* FROM unnest($1::bigint[]) WITH ORDINALITY AS k(id, n)
         CROSS JOIN LATERAL (SELECT ${HEALTH_COLUMNS} FROM test_health WHERE test_id = k.id) h
        ORDER BY k.n
          FOR UPDATE OF h`,
      [sorted],
    );
    return new Map(rows.map((r) => [r.test_id, toHealth(r)]));
  }

  /**
   * The rows of `testIds`, read without a lock, each with its version (xmin) for `update`. A test whose outcome is a
   * plain pass (`codes`: see OUTCOME) and that is steady (flakiness.ts, `steady`) with a last run before `run` and
   * first seen by `startedAt` is quiet, and not read: that pass changes nothing but its window, so it is not written
   * (its row lags; `caughtUp` reads it back). The window's outcome bytes are checked in SQL, and only for a test that
   * ever failed. The repeats (plain failures of tests failing steadily, skips of tests that never ran) are applied by
   * the same statement (repeatsSql), with the run's `entry`: those are answered in `repeated`, and not read.
   * A batch's tests mostly have ids close together (a suite's tests are created by its first run, together): those
   * are read as one range of the primary key (`readRange`), the others one index probe a test (`readEach`).
   */
  async read(
    tx: Pick<EntityManager, 'query'>,
    testIds: readonly string[],
    codes: readonly number[],
    run: string,
    startedAt: Date,
    entry: RunEntry,
  ): Promise<HealthRead> {
    // The ids as numbers, once (readRange places each by its number too).
    const numbers = new Float64Array(testIds.length);
    let lo = Infinity;
    let hi = -Infinity;
    for (let i = 0; i < testIds.length; i++) {
      const n = Number(testIds[i]);
      numbers[i] = n;
      lo = n < lo ? n : lo;
      hi = n > hi ? n : hi;
    }
    return testIds.length >= RANGE_MIN && hi - lo < RANGE_SPAN * testIds.length
      ? this.readRange(tx, testIds, numbers, codes, run, startedAt, entry, lo, hi)
      : this.readEach(tx, testIds, codes, run, startedAt, entry);
  }

  /**
   * `read`'s repeats for plain failures (`codes`: see OUTCOME) of tests known failing steadily (settled-tests.ts),
   * applied without reading the batch's other rows, nor the window of theirs (knownFailingSql): answers the tests it
   * applied them to (the others, whose row is no longer so, are to be read). One index probe a test.
   */
  async applyRepeats(
    tx: Pick<EntityManager, 'query'>,
    testIds: readonly string[],
    codes: readonly number[],
    run: string,
    startedAt: Date,
    entry: RunEntry,
  ): Promise<Set<string>> {
    const [{ ids }] = await queryPrepared<{ ids: string | null }>(
      tx,
      'test-health-apply-repeats',
      `WITH ${failuresSql(EACH, knownFailingSql('t'))}
       SELECT string_agg(f.test_id::text, ',') AS ids FROM f`,
      [idArray(testIds), Buffer.from(codes), run, startedAt, entry.entryHead, entry.entryTail, entry.window],
    );
    return new Set(ids?.split(','));
  }

  /**
   * `read` through one scan of the primary key from the lowest id to the highest: ~1 µs a row, where a probe a test
   * costs ~3 µs (its own descent of the index), and a plan without the batch's ids in it (a list of 1,000 constants
   * costs its planning ~1 ms). The batch's outcomes come as a byte an id of the range (`rangeCodes`): the rows of the
   * range that are not the batch's are passed over (two clients writing one run create its tests with their ids
   * interleaved, so a batch's range holds another batch's tests as well), a row is judged quiet in SQL for its own
   * outcome, and the repeats are applied to the rows the scan found, by their place (ctid: no second look-up of the
   * primary key). The tests that are not quiet come back each with its columns (read by a probe: few); the quiet ones
   * are the rest, when every test of the batch has a row (the count of the rows found says so), else they come back
   * as one list of ids.
   */
  private async readRange(
    tx: Pick<EntityManager, 'query'>,
    testIds: readonly string[],
    numbers: Float64Array,
    codes: readonly number[],
    run: string,
    startedAt: Date,
    entry: RunEntry,
    lo: number,
    hi: number,
  ): Promise<HealthRead> {
    // Answered in the one row without a test id: whether every test of the batch has a row, the quiet tests when
    // not, and the repeated ones, as comma-separated text (which a split reads ten times as fast as node-postgres
    // parses an array of them: ~30 µs for 900 ids, not ~330). The others each with its columns, by a probe each
    // (the LIMIT keeps it so, as in readEach: a guess of half the range made it a hash of the table).
    const rows = await queryPrepared<
      | (HealthRow & { version: string; every_row: null; quiet_ids: null; repeated_ids: null })
      | { test_id: null; every_row: boolean; quiet_ids: string | null; repeated_ids: string | null }
    >(
      tx,
      `test-health-read-range-${this.quietFrom}`,
      `WITH s AS MATERIALIZED (
         SELECT t.ctid AS tid, t.test_id, c.code, (${quietSql('t', plainPassSql('c.code'), this.quietFrom)}) IS TRUE AS quiet
           FROM test_health t CROSS JOIN LATERAL (SELECT ${RANGE_CODE} AS code) c
          WHERE t.test_id BETWEEN $1 AND $2 AND ${RANGE_CODE} <> 0),
       ${repeatsSql({
         from: 's k',
         match: 't.ctid = k.tid',
         code: 'k.code',
         head: '$6',
         tail: '$7',
         window: '$8',
       })},
       n AS MATERIALIZED (SELECT count(*) = $9 AS every_row FROM s)
       SELECT NULL::bool AS every_row, NULL::text AS quiet_ids, NULL::text AS repeated_ids, h.version, h.test_id,
              ${COLUMNS_OF_H}
         FROM s CROSS JOIN LATERAL (SELECT t.xmin::text AS version, ${COLUMNS_OF_T} FROM test_health t
                                     WHERE t.test_id = s.test_id LIMIT 1) h
        WHERE NOT s.quiet AND s.test_id NOT IN (SELECT rep.test_id FROM rep)
       UNION ALL
       SELECT (SELECT every_row FROM n),
              string_agg(s.test_id::text, ',') FILTER (WHERE NOT (SELECT every_row FROM n)),
              (SELECT string_agg(rep.test_id::text, ',') FROM rep), ${NULLS_OF_H}
         FROM s WHERE s.quiet`,
      [
        lo,
        hi,
        run,
        startedAt,
        rangeCodes(numbers, codes, lo, hi),
        entry.entryHead,
        entry.entryTail,
        entry.window,
        testIds.length,
      ],
    );
    const result: HealthRead = {
      quiet: new Set(),
      repeated: new Set(),
      stored: new Map(),
      versions: new Map(),
    };
    let everyRow = false;
    for (const r of rows) {
      if (r.test_id === null) {
        everyRow = r.every_row;
        result.quiet = new Set(r.quiet_ids?.split(','));
        result.repeated = new Set(r.repeated_ids?.split(','));
      } else {
        const id = String(r.test_id);
        result.stored.set(id, toHealth(r));
        result.versions.set(id, r.version);
      }
    }
    if (everyRow) {
      for (const id of testIds) {
        if (!result.stored.has(id) && !result.repeated.has(id)) {
          result.quiet.add(id);
        }
      }
    }
    return result;
  }

  /**
   * `read` one index probe a test (the LIMIT keeps PostgreSQL from turning the probes into a join, which it planned
   * as a nested loop over a scan of the table once its statistics said few rows pass).
   */
  private async readEach(
    tx: Pick<EntityManager, 'query'>,
    testIds: readonly string[],
    codes: readonly number[],
    run: string,
    startedAt: Date,
    entry: RunEntry,
  ): Promise<HealthRead> {
    // Quiet rows are not answered at all (most of a re-run's tests), a test without a row as its id alone, a test
    // whose repeat was applied as its id with `repeated`. Each test's code is the byte of its place ($2).
    const rows = await queryPrepared<HealthRow & { version: string | null; repeated: boolean }>(
      tx,
      `test-health-read-each-${this.quietFrom}`,
      `WITH ${repeatsSql(EACH)}
       SELECT k.id AS test_id, h.version, ${COLUMNS_OF_H}, false AS repeated
         FROM unnest($1::bigint[]) WITH ORDINALITY AS k(id, n)
         LEFT JOIN LATERAL (
          SELECT t.xmin::text AS version, ${COLUMNS_OF_T},
                 (${quietSql('t', plainPassSql(EACH.code), this.quietFrom)}) AS quiet
            FROM test_health t WHERE t.test_id = k.id
           LIMIT 1) h ON true
        WHERE h.quiet IS NOT TRUE AND k.id NOT IN (SELECT rep.test_id FROM rep)
       UNION ALL
       SELECT rep.test_id, ${NULLS_OF_H_BUT_ID}, true FROM rep`,
      [idArray(testIds), Buffer.from(codes), run, startedAt, entry.entryHead, entry.entryTail, entry.window],
    );
    const quiet = new Set(testIds);
    const repeated = new Set<string>();
    const stored = new Map<string, TestHealth>();
    const versions = new Map<string, string>();
    for (const r of rows) {
      const id = String(r.test_id);
      quiet.delete(id);
      if (r.repeated) {
        repeated.add(id);
      } else if (r.version !== null) {
        stored.set(id, toHealth(r));
        versions.set(id, r.version);
      }
    }
    return { quiet, repeated, stored, versions };
  }

  /**
   * The steady tests and the tests failing steadily among `stored` (as `lock` read them) brought up to date: a steady
   * test's row may lag behind its last plain passes (`steadyAmong`), and a failing one's behind its last plain failures
   * (settled-tests.ts, LAG_MS), so its window, run count and last run are read back from its outcomes (the last
   * `flaky.window` runs in which it ran, as the retention recount does), and a failing test's last failure with them,
   * leaving out the run `except` (the one about to be applied). Only tests that stop being so, or that a person
   * quarantines, pay for it.
   */
  async caughtUp(
    tx: Pick<EntityManager, 'query'>,
    projectId: string,
    stored: Map<string, TestHealth>,
    except: string | null,
  ): Promise<void> {
    const ids = [...stored].filter(([, h]) => steady(h) || failingSteadily(h)).map(([id]) => id);
    if (!ids.length) {
      return;
    }
    const rows: { test_id: string; win: Buffer | null; failed_at: Date | null }[] = await tx.query(
      `WITH settings AS (SELECT ${flakyWindowSql('$1')} AS win)
       SELECT k.id AS test_id,
              (SELECT ${windowBytes('e')}
                 FROM (${windowEntries('k.id', '(SELECT win FROM settings)', '$3::bigint')}) e) AS win,
              (SELECT max(ru.started_at) FROM results r JOIN runs ru ON ru.id = r.run_id
                WHERE r.test_id = k.id AND r.outcome AND r.status IN ('FAILED', 'BROKEN') AND r.run_id > h.last_run_id
                  AND r.run_id <> $3::bigint AND r.${NOT_PURGING}) AS failed_at
         FROM unnest($2::bigint[]) AS k(id) JOIN test_health h ON h.test_id = k.id`,
      [projectId, ids, except ?? '0'],
    );
    for (const r of rows) {
      const id = String(r.test_id);
      const h = stored.get(id)!;
      const entries = r.win ? entriesOf(r.win) : [];
      if (!entries.length) {
        continue;
      }
      const newest = entries[entries.length - 1];
      const newer = h.lastRunId === null || compareRuns(newest.run, h.lastRunId) > 0;
      stored.set(id, {
        ...h,
        entries,
        runs: entries.length,
        lastRunId: newer ? newest.run : h.lastRunId,
        // A test failing steadily keeps failing, FAILED or BROKEN as its last outcome was.
        lastStatus: newer ? statusOfBits(newest.bits) : h.lastStatus,
        lastFailedAt:
          r.failed_at && (h.lastFailedAt === null || r.failed_at > h.lastFailedAt)
            ? r.failed_at
            : h.lastFailedAt,
      });
    }
  }

  /**
   * Stores the health of tests that have a row, locked by `lock`, or as `read` read them: then each is written only
   * if it is still the version read (its xmin), and the tests whose row changed meanwhile are answered, to be locked
   * and weighed again (a concurrent writer of the same tests: rare, as a test is written by one batch at a time).
   * Only what a run changes is written on the common
   * path (the window and what the rules made of it), with the first seen only when it moved: an indexed column
   * left as it was keeps the update HOT. The quarantine columns follow in a second statement, for the few rows whose
   * quarantine changed.
   */
  async update(
    tx: Pick<EntityManager, 'query'>,
    rows: readonly HealthWrite[],
    versions?: ReadonlyMap<string, string>,
  ): Promise<string[]> {
    if (!rows.length) {
      return [];
    }
    const { bytes, at, len } = windows(rows);
    const written = await queryPrepared<{ test_id: string }>(
      tx,
      'test-health-update',
      `UPDATE test_health h
          SET win = substr($1::bytea, u.at, u.len), runs = u.runs, flake_rate = u.flake_rate, flaky = u.flaky,
              last_status = u.last_status, last_run_id = u.last_run_id, state = u.state,
              first_seen_at = coalesce(${ts('u.first_seen_ms')}, h.first_seen_at),
              last_failed_at = coalesce(${ts('u.last_failed_ms')}, h.last_failed_at)
         FROM unnest($2::bigint[], $3::int[], $4::int[], $5::int[], $6::float8[], $7::bool[], $8::text[],
                     $9::bigint[], $10::text[], $11::float8[], $12::float8[], $13::text[])
              AS u(test_id, at, len, runs, flake_rate, flaky, last_status, last_run_id, state, first_seen_ms,
                   last_failed_ms, version)
        WHERE h.test_id = u.test_id AND (u.version IS NULL OR h.xmin = u.version::xid)
        RETURNING h.test_id`,
      [
        bytes,
        rows.map((r) => r.testId),
        at,
        len,
        rows.map((r) => r.health.runs),
        rows.map((r) => storedFlakeRate(r.health)),
        rows.map((r) => r.health.flaky),
        rows.map((r) => r.health.lastStatus),
        rows.map((r) => r.health.lastRunId),
        rows.map((r) => r.health.state),
        // null: unchanged (it never goes back to null).
        rows.map(({ health: h, before: b }) =>
          b && b.firstSeenAt.getTime() === h.firstSeenAt.getTime() ? null : ms(h.firstSeenAt),
        ),
        // Always: `before` may hold one caught up from the outcomes (caughtUp), which the row lacks. Its index holds
        // the day (ix_test_health_last_failed_day), so the same instant or day written again keeps the update HOT.
        rows.map(({ health: h }) => ms(h.lastFailedAt)),
        rows.map((r) => versions?.get(r.testId) ?? null),
      ],
    );
    const done = new Set(written.map((r) => String(r.test_id)));
    const quarantines = rows.filter((r) => done.has(r.testId) && quarantineChanged(r));
    if (quarantines.length) {
      await tx.query(
        `UPDATE test_health h
            SET q_since = ${ts('q.since')}, q_reason = q.reason, q_auto = q.auto, q_by_user_id = q.by_user_id,
                q_until = ${ts('q.until')}, q_passes = q.passes, q_pass_run = q.pass_run,
                released_run = q.released_run
           FROM ${QUARANTINE_RECORD(1)}
          WHERE h.test_id = q.test_id`,
        quarantineArrays(quarantines),
      );
    }
    return rows.map((r) => r.testId).filter((id) => !done.has(id));
  }

  /**
   * Stores the health of tests that had no row; answers the tests whose row a concurrent writer inserted meanwhile
   * (left as that writer stored them: to be locked and weighed again).
   */
  async insert(
    tx: Pick<EntityManager, 'query'>,
    projectId: string,
    rows: readonly HealthWrite[],
  ): Promise<string[]> {
    if (!rows.length) {
      return [];
    }
    const { bytes, at, len } = windows(rows);
    const inserted: { test_id: string }[] = await tx.query(
      `INSERT INTO test_health (project_id, ${HEALTH_COLUMNS})
       SELECT $1::bigint, q.test_id, substr($2::bytea, u.at, u.len), u.runs, u.flake_rate, u.flaky, u.last_status,
              u.last_run_id, ${ts('u.first_seen_ms')}, ${ts('u.last_failed_ms')}, u.state, ${ts('q.since')}, q.reason,
              q.auto, q.by_user_id, ${ts('q.until')}, q.passes, q.pass_run, q.released_run
         FROM ${QUARANTINE_RECORD(3)}
         JOIN unnest($12::bigint[], $13::int[], $14::int[], $15::int[], $16::float8[], $17::bool[], $18::text[],
                     $19::bigint[], $20::text[], $21::float8[], $22::float8[])
              AS u(test_id, at, len, runs, flake_rate, flaky, last_status, last_run_id, state, first_seen_ms,
                   last_failed_ms) ON u.test_id = q.test_id
        ORDER BY q.test_id
       ON CONFLICT (test_id) DO NOTHING
       RETURNING test_id`,
      [
        projectId,
        bytes,
        ...quarantineArrays(rows),
        rows.map((r) => r.testId),
        at,
        len,
        rows.map((r) => r.health.runs),
        rows.map((r) => storedFlakeRate(r.health)),
        rows.map((r) => r.health.flaky),
        rows.map((r) => r.health.lastStatus),
        rows.map((r) => r.health.lastRunId),
        rows.map((r) => r.health.state),
        rows.map((r) => ms(r.health.firstSeenAt)),
        rows.map((r) => ms(r.health.lastFailedAt)),
      ],
    );
    const done = new Set(inserted.map((r) => r.test_id));
    return rows.map((r) => r.testId).filter((id) => !done.has(id));
  }

  /**
   * Stores the health of tests that cannot have a row: test cases created by the caller's own transaction (see
   * TestOutcome.created). COPYed, in test id order: no ON CONFLICT (whose check of the unique index and speculative
   * insertion cost a row as much again), and no parameter arrays to build and unnest (an import's finish stores
   * 100,000 of them). Rows that share their health object (new tests of one outcome: see the observer) share the
   * text of their row but for the test id, made once.
   */
  async insertNew(tx: EntityManager, projectId: string, rows: readonly HealthWrite[]): Promise<void> {
    if (!rows.length) {
      return;
    }
    const sorted = [...rows].sort((a, b) =>
      a.testId.length !== b.testId.length ? a.testId.length - b.testId.length : a.testId < b.testId ? -1 : 1,
    );
    const project = copyField(projectId);
    const copyTime = copyTimes();
    const text = new CopyText();
    let win = Buffer.allocUnsafe(64 * ENTRY);
    const rests = new Map<TestHealth, string>();
    for (const { testId, health: h } of sorted) {
      let rest = rests.get(h);
      if (rest === undefined) {
        const size = h.entries.length * ENTRY;
        if (size > win.length) {
          win = Buffer.allocUnsafe(size);
        }
        writeEntries(win, 0, h.entries);
        const q = h.quarantine;
        rest =
          `\\\\x${win.toString('hex', 0, size)}\t${h.runs}\t${storedFlakeRate(h)}\t` +
          `${copyBool(h.flaky)}\t${copyField(h.lastStatus)}\t${copyField(h.lastRunId)}\t${copyTime(h.firstSeenAt)}\t` +
          `${copyTime(h.lastFailedAt)}\t${copyField(h.state)}\t${copyTime(q?.since)}\t${copyField(q?.reason)}\t` +
          `${copyBool(q?.auto)}\t${copyField(q?.byUserId)}\t${copyTime(q?.until)}\t${h.passes}\t` +
          `${copyField(h.passRun)}\t${copyField(h.releasedRun)}\n`;
        rests.set(h, rest);
      }
      text.add(`${project}\t${copyField(testId)}\t${rest}`);
    }
    await copyIn(tx, `COPY test_health (project_id, ${HEALTH_COLUMNS}) FROM STDIN`, text);
    text.release();
  }

  /**
   * One test's health, row-locked, in a transaction of its own (quarantine and release by a person); `work` gets the
   * transaction too, for what must commit with the change (the notification a quarantine owes).
   */
  async change<T>(
    projectId: string,
    testId: string,
    work: (
      h: TestHealth | undefined,
      save: (h: TestHealth) => Promise<void>,
      tx: EntityManager,
    ) => Promise<T>,
  ): Promise<T> {
    return this.db.transaction(async (tx) => {
      const stored = await this.lock(tx, [testId]);
      await this.caughtUp(tx, projectId, stored, null);
      const found = stored.get(testId);
      return work(
        found,
        async (h) => {
          if (found) {
            await this.update(tx, [{ testId, health: h }]);
            await logHealthChanges(tx, projectId, [testId]);
            return;
          }
          // A first row: test_health has no foreign key (TestHealthWithoutForeignKey1795840000000), so the test case
          // is held against the retention cleanup (test-case-guard.ts) and looked for under that lock.
          await lockTestCasesShared(tx, projectId);
          const exists: unknown[] = await tx.query(
            'SELECT 1 FROM test_cases WHERE id = $1 AND project_id = $2',
            [testId, projectId],
          );
          if (!exists.length) {
            throw AppError.notFound(`Test ${testId} not found`);
          }
          await this.insert(tx, projectId, [{ testId, health: h }]);
        },
        tx,
      );
    });
  }

  /**
   * Ends quarantines whose `until` has passed (at most `limit`, skipping rows a writer holds): reads already treat
   * them as ended; this makes it durable and tells of it.
   */
  async endExpired(limit: number): Promise<ExpiredQuarantine[]> {
    const [rows]: [{ test_id: string; project_id: string; auto: boolean | null }[], number] =
      await this.db.query(
        `WITH due AS (
         SELECT test_id, q_auto FROM test_health WHERE q_until <= now() ORDER BY test_id LIMIT $1 FOR UPDATE SKIP LOCKED)
       UPDATE test_health h
          SET q_since = NULL, q_reason = NULL, q_auto = NULL, q_by_user_id = NULL, q_until = NULL, q_passes = 0,
              q_pass_run = NULL, released_run = h.last_run_id,
              state = CASE WHEN h.flaky THEN 'FLAKY' WHEN h.last_status IN ('FAILED', 'BROKEN') THEN 'FAILING'
                           ELSE 'HEALTHY' END
         FROM due WHERE h.test_id = due.test_id
       RETURNING h.test_id, h.project_id, due.q_auto AS auto`,
        [limit],
      );
    return rows.map((r) => ({
      testId: String(r.test_id),
      projectId: String(r.project_id),
      auto: r.auto ?? false,
    }));
  }

  /** A page of the project's quarantined tests (an `until` that passed has ended it), by ix_test_health_state. */
  async quarantined(
    projectId: string,
    order: string,
    size: number,
    offset: number,
  ): Promise<[QuarantinedRow[], number]> {
    const where = `h.project_id = $1 AND h.state = 'QUARANTINED' AND (h.q_until IS NULL OR h.q_until > now())`;
    const rows: QuarantinedRow[] = await this.db.query(
      `SELECT h.test_id AS "testId", t.suite, t.name, h.q_since AS since, h.q_reason AS reason, h.q_auto AS auto,
              h.q_until AS until
         FROM test_health h JOIN test_cases t ON t.id = h.test_id
        WHERE ${where}
        ORDER BY ${order} LIMIT $2 OFFSET $3`,
      [projectId, size, offset],
    );
    const [{ n }]: { n: string }[] = await this.db.query(
      `SELECT count(*) AS n FROM test_health h WHERE ${where}`,
      [projectId],
    );
    return [rows, Number(n)];
  }
}

export interface QuarantinedRow {
  testId: string;
  suite: string;
  name: string;
  since: Date;
  reason: string;
  auto: boolean;
  until: Date | null;
}
