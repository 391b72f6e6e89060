import type { ResultStatus } from './entities.js';
import type { RunCounts } from './result-input.js';

/**
 * Attempts and outcomes (API.md, "Attempts: a test retried within a run"). The results of one test in one run are
 * its attempts, ordered by `retry`, then `startedAt` (an attempt without one before any with one), then arrival
 * (the result id); the last is the test's outcome in the run. A result row says whether it is the outcome
 * (`outcome`, unique per run and test by uq_results_test_run_outcome), and the outcome row carries how many
 * attempts the test had (`attempts`) and the statuses of its other attempts as bits (`other_statuses`), so that
 * counts, lists and comparisons read one row a test and never regroup a run's results.
 */

/** A status as a bit of `other_statuses`. */
export const STATUS_BITS: Record<ResultStatus, number> = { PASSED: 1, FAILED: 2, BROKEN: 4, SKIPPED: 8 };
export const FAILURE_BITS = STATUS_BITS.FAILED | STATUS_BITS.BROKEN;

/** SQL for the bit of `results.status` (for an expression over results). */
export const STATUS_BIT_SQL = (column: string) =>
  `(CASE ${column} WHEN 'PASSED' THEN 1 WHEN 'FAILED' THEN 2 WHEN 'BROKEN' THEN 4 ELSE 8 END)`;

/** The order of attempts in SQL, last attempt first (the outcome is row 1). */
export const LAST_ATTEMPT_FIRST = 'retry DESC, started_at DESC NULLS LAST, id DESC';

export interface Attempt {
  /** The result id (decimal): arrival order. */
  id: string;
  testId: string;
  status: ResultStatus;
  retry: number;
  /** Milliseconds since the epoch, or null. */
  startedAt: number | null;
}

export interface StoredOutcome extends Attempt {
  attempts: number;
  otherStatuses: number;
}

/** Decimal ids compared as numbers, without BigInt. */
function compareIds(a: string, b: string): number {
  return a.length !== b.length ? a.length - b.length : a < b ? -1 : a > b ? 1 : 0;
}

/** Whether attempt `a` comes after `b` (see above). */
export function after(a: Attempt, b: Attempt): boolean {
  if (a.retry !== b.retry) {
    return a.retry > b.retry;
  }
  const sa = a.startedAt ?? -Infinity;
  const sb = b.startedAt ?? -Infinity;
  if (sa !== sb) {
    return sa > sb;
  }
  return compareIds(a.id, b.id) > 0;
}

export const noRunCounts = (): RunCounts => ({
  total: 0,
  passed: 0,
  failed: 0,
  broken: 0,
  skipped: 0,
  passedOnRetry: 0,
  attempts: 0,
});

const FIELD = { PASSED: 'passed', FAILED: 'failed', BROKEN: 'broken', SKIPPED: 'skipped' } as const;

/** Adds (sign 1) or removes (sign -1) one outcome's share of the counts (attempts aside). */
export function countOutcome(
  counts: RunCounts,
  status: ResultStatus,
  otherStatuses: number,
  sign: 1 | -1,
): void {
  counts.total += sign;
  counts[FIELD[status]] += sign;
  if (status === 'PASSED' && otherStatuses & FAILURE_BITS) {
    counts.passedOnRetry += sign;
  }
}

export interface AttemptPlan {
  /** Per attempt given, in order: whether it is (now) its test's outcome and, if so, its attempts and other statuses. */
  rows: { outcome: boolean; attempts: number; otherStatuses: number }[];
  /** Stored outcomes that change: demoted (`outcome` false) by a later attempt, or told of more attempts. */
  updates: { id: string; testId: string; outcome: boolean; attempts: number; otherStatuses: number }[];
  /** What the batch adds to the run's counts (a demoted outcome's share removed). */
  delta: RunCounts;
  /** Whether any row differs from a lone first attempt (outcome, 1 attempt, no other statuses). */
  repeats: boolean;
  /** Each test's outcome once the batch is stored, a test once, in the order of its first attempt in the batch. */
  outcomes: { testId: string; status: ResultStatus; otherStatuses: number }[];
}

/**
 * The outcomes after `attempts` (new results of one run) join what `stored` holds (the stored outcome of each of
 * their tests that has one).
 */
export function planAttempts(attempts: Attempt[], stored: ReadonlyMap<string, StoredOutcome>): AttemptPlan {
  const rows: AttemptPlan['rows'] = attempts.map(() => ({ outcome: false, attempts: 1, otherStatuses: 0 }));
  const updates: AttemptPlan['updates'] = [];
  const outcomes: AttemptPlan['outcomes'] = [];
  const delta = noRunCounts();
  delta.attempts = attempts.length;
  let repeats = false;
  // Most batches hold each test once and none stored: one pass, no grouping.
  const groups = new Map<string, number[]>();
  for (let i = 0; i < attempts.length; i++) {
    const group = groups.get(attempts[i].testId);
    if (group) {
      group.push(i);
    } else {
      groups.set(attempts[i].testId, [i]);
    }
  }
  for (const [testId, indexes] of groups) {
    let best = indexes[0];
    let bits = 0;
    for (const i of indexes) {
      bits |= STATUS_BITS[attempts[i].status];
      if (i !== best && after(attempts[i], attempts[best])) {
        best = i;
      }
    }
    // The statuses of the batch's attempts other than its last one.
    let othersOfBatch = 0;
    for (const i of indexes) {
      if (i !== best) {
        othersOfBatch |= STATUS_BITS[attempts[i].status];
      }
    }
    const old = stored.get(testId);
    if (indexes.length > 1 || old) {
      repeats = true;
    }
    if (!old) {
      rows[best] = { outcome: true, attempts: indexes.length, otherStatuses: othersOfBatch };
      countOutcome(delta, attempts[best].status, othersOfBatch, 1);
      outcomes.push({ testId, status: attempts[best].status, otherStatuses: othersOfBatch });
      continue;
    }
    countOutcome(delta, old.status, old.otherStatuses, -1);
    if (after(attempts[best], old)) {
      const otherStatuses = old.otherStatuses | STATUS_BITS[old.status] | othersOfBatch;
      rows[best] = { outcome: true, attempts: old.attempts + indexes.length, otherStatuses };
      updates.push({
        id: old.id,
        testId,
        outcome: false,
        attempts: old.attempts,
        otherStatuses: old.otherStatuses,
      });
      countOutcome(delta, attempts[best].status, otherStatuses, 1);
      outcomes.push({ testId, status: attempts[best].status, otherStatuses });
    } else {
      const otherStatuses = old.otherStatuses | bits;
      updates.push({
        id: old.id,
        testId,
        outcome: true,
        attempts: old.attempts + indexes.length,
        otherStatuses,
      });
      countOutcome(delta, old.status, otherStatuses, 1);
      outcomes.push({ testId, status: old.status, otherStatuses });
    }
  }
  return { rows, updates, delta, repeats, outcomes };
}

/** Counts added up. */
export function addCounts(into: RunCounts, more: RunCounts): RunCounts {
  into.total += more.total;
  into.passed += more.passed;
  into.failed += more.failed;
  into.broken += more.broken;
  into.skipped += more.skipped;
  into.passedOnRetry += more.passedOnRetry;
  into.attempts += more.attempts;
  return into;
}
