import { FAILURE_BITS, STATUS_BITS } from '../results/attempts.js';
import type { ResultStatus } from '../results/entities.js';

/**
 * The rules of test health (API.md, "Test health: flaky tests and quarantine"), pure: a test's state after one more
 * outcome of it. The results writer's observer (stability.observer.ts) applies them to the tests of each batch, in
 * the batch's transaction, from the state kept per test (test_health), never from its history.
 *
 * A test's window is its entries in the last `flaky.window` runs in which it ran, one entry a run, oldest first by
 * run id (the order the service learned of the runs). A run in which its outcome was SKIPPED is not one in which it
 * ran: it has no entry (SKIPPED is ignored). A later write to the same run (a late batch, a retry) replaces that
 * run's entry, so a run counts once however many results the test has in it. The window keeps as many entries as
 * the window setting at the time of the write: a window made larger fills with the runs that follow.
 */

/** One run of the window. */
export interface WindowEntry {
  /** The run id (decimal). */
  run: string;
  /** The outcome's status bit shifted left by 4, ORed with the bits of every attempt (STATUS_BITS). */
  bits: number;
  /** The run's stream, as a key (health-keys.ts). */
  stream: string;
  /** The run's `commit` attribute, as a key; NO_COMMIT when it has none (and then it matches no other run). */
  commit: string;
}

export const NO_COMMIT = '0';

export interface FlakyPolicy {
  window: number;
  minRuns: number;
  flipRate: number;
  autoQuarantine: boolean;
  releaseAfterPasses: number;
}

export interface Quarantine {
  since: Date;
  reason: string;
  auto: boolean;
  byUserId: string | null;
  until: Date | null;
}

export type HealthState = 'HEALTHY' | 'FAILING' | 'FLAKY' | 'QUARANTINED';
export const HEALTH_STATES: readonly HealthState[] = ['HEALTHY', 'FAILING', 'FLAKY', 'QUARANTINED'];

/** What is kept of a test (one row of test_health). */
export interface TestHealth {
  entries: WindowEntry[];
  runs: number;
  flakeRate: number | null;
  flaky: boolean;
  lastStatus: ResultStatus | null;
  lastRunId: string | null;
  firstSeenAt: Date;
  lastFailedAt: Date | null;
  state: HealthState;
  quarantine: Quarantine | null;
  /** Consecutive passing runs since it was quarantined, and the last of them (auto-release). */
  passes: number;
  passRun: string | null;
  /** The last run known when it was last released: only a failure in a later run quarantines it again. */
  releasedRun: string | null;
}

/** A test's outcome in a run after a write (ResultsObserver.outcomesSettled), with what is known of the run. */
export interface RunOutcome {
  run: string;
  stream: string;
  commit: string;
  startedAt: Date;
  status: ResultStatus;
  otherStatuses: number;
}

export interface Verdict {
  runs: number;
  flakeRate: number | null;
  flaky: boolean;
  /** Why it is flaky, in words (the reason of an automatic quarantine). */
  why: string | null;
}

/** What one outcome changed, for the events after the commit. */
export interface Transitions {
  becameFlaky: boolean;
  quarantined: boolean;
  /** Released: automatically after enough passing runs, or because its `until` passed. */
  released: 'PASSES' | 'EXPIRED' | null;
}

/** Decimal ids compared as numbers. */
export function compareRuns(a: string, b: string): number {
  return a.length !== b.length ? a.length - b.length : a < b ? -1 : a > b ? 1 : 0;
}

const PASSED = STATUS_BITS.PASSED;
/** The outcome's status bit of an entry. */
const outcomeBit = (e: WindowEntry) => e.bits >> 4;
/** Every attempt's bits of an entry. */
const attemptBits = (e: WindowEntry) => e.bits & 0xf;
const failedIn = (e: WindowEntry) => (attemptBits(e) & FAILURE_BITS) !== 0;
const passedIn = (e: WindowEntry) => (attemptBits(e) & PASSED) !== 0;

export function entryBits(status: ResultStatus, otherStatuses: number): number {
  return (STATUS_BITS[status] << 4) | STATUS_BITS[status] | (otherStatuses & 0xf);
}

/** The three rules over a window (the last `policy.window` entries of `entries`). */
export function judge(
  entries: readonly WindowEntry[],
  policy: Pick<FlakyPolicy, 'window' | 'minRuns' | 'flipRate'>,
): Verdict {
  const window = entries.length > policy.window ? entries.slice(-policy.window) : entries;
  const runs = window.length;
  // (c) flips between consecutive runs of one stream: an outcome PASSED against FAILED or BROKEN. (Most tests run
  // in one stream: it is followed without a map until a second one appears.)
  let flips = 0;
  let stream: string | undefined;
  let lastPassed = false;
  let lastPassedOf: Map<string, boolean> | undefined;
  for (const e of window) {
    const passed = outcomeBit(e) === PASSED;
    if (lastPassedOf === undefined && (stream === undefined || stream === e.stream)) {
      if (stream !== undefined && lastPassed !== passed) {
        flips++;
      }
      stream = e.stream;
      lastPassed = passed;
      continue;
    }
    if (lastPassedOf === undefined) {
      lastPassedOf = new Map([[stream!, lastPassed]]);
    }
    const before = lastPassedOf.get(e.stream);
    if (before !== undefined && before !== passed) {
      flips++;
    }
    lastPassedOf.set(e.stream, passed);
  }
  const flakeRate = runs >= 2 ? flips / (runs - 1) : null;
  // (a) failed and passed in one run.
  const mixed = window.find((e) => failedIn(e) && passedIn(e));
  if (mixed) {
    return { runs, flakeRate, flaky: true, why: `failed and passed in run ${mixed.run}` };
  }
  // (b) failed and passed on one commit (runs without one never match each other).
  const byCommit = new Map<string, number>();
  for (const e of window) {
    if (e.commit === NO_COMMIT) {
      continue;
    }
    const bits = (byCommit.get(e.commit) ?? 0) | attemptBits(e);
    if (bits & PASSED && bits & FAILURE_BITS) {
      return { runs, flakeRate, flaky: true, why: 'failed and passed on one commit' };
    }
    byCommit.set(e.commit, bits);
  }
  if (flakeRate !== null && runs >= policy.minRuns && flakeRate >= policy.flipRate) {
    return {
      runs,
      flakeRate,
      flaky: true,
      why: `flip rate ${flakeRate.toFixed(2)} over ${runs} runs (at least ${policy.flipRate})`,
    };
  }
  return { runs, flakeRate, flaky: false, why: null };
}

/**
 * Whether a passing outcome leaves this kept health as it is, but for its window, run count, flake rate and last run:
 * a test not quarantined, not flaky, that ran at least once and passed in every run of its window (its flake rate is 0,
 * or none after one run, which is stored as 0). Such a test's row may lag behind its last passing runs, and is brought
 * up to date from its outcomes (test-health.repository.ts, `caughtUp`) before anything else is applied to it.
 */
export function steady(h: TestHealth): boolean {
  return (
    h.quarantine === null &&
    !h.flaky &&
    h.lastStatus === 'PASSED' &&
    h.runs >= 1 &&
    h.entries.every((e) => outcomeBit(e) === PASSED && !failedIn(e))
  );
}

/**
 * Whether a failing outcome leaves this kept health as it is, but for its window, run count, last status, last run and
 * last failure (`plainFailure`): a test not quarantined, not flaky, whose last status is a failure and which failed in
 * every run of its window, no outcome or attempt passing (test-health.repository.ts, `failingSteadilySql`).
 */
export function failingSteadily(h: TestHealth): boolean {
  return (
    h.quarantine === null &&
    !h.flaky &&
    (h.lastStatus === 'FAILED' || h.lastStatus === 'BROKEN') &&
    h.entries.length > 0 &&
    h.entries.every((e) => outcomeBit(e) !== PASSED && !passedIn(e))
  );
}

/**
 * Whether an outcome is a plain pass (PASSED, no attempt failed or broke): applied to a steady test in a later run,
 * it changes nothing the rules or the state read but the window, so the write stores nothing for it (its result is
 * the record: `caughtUp` reads the window back from the outcomes when the test next needs it).
 */
export function plainPass(outcome: Pick<RunOutcome, 'status' | 'otherStatuses'>): boolean {
  return outcome.status === 'PASSED' && (outcome.otherStatuses & FAILURE_BITS) === 0;
}

/**
 * Whether an outcome is a plain failure (FAILED or BROKEN, no attempt passed): applied to a test that failed in every
 * run of its window (no outcome or attempt passed) and is neither flaky nor quarantined, it leaves the test so: no
 * flip and no pass, so not flaky under a flip rate above 0 (at 0, rule (c) makes any test flaky once it ran
 * `minRuns` times: there it is weighed as any other outcome), flake rate 0, FAILING. Only its window, run count, last
 * status, last run and last failure move, which the read of a batch applies in SQL (test-health.repository.ts,
 * `repeatsSql`) rather than answering the row, weighing it here and writing it back.
 */
export function plainFailure(outcome: Pick<RunOutcome, 'status' | 'otherStatuses'>): boolean {
  return (
    (outcome.status === 'FAILED' || outcome.status === 'BROKEN') && (outcome.otherStatuses & PASSED) === 0
  );
}

/**
 * Whether an outcome is a skip (SKIPPED): applied to a test that has never run (its window is empty: every outcome
 * of it so far was a skip, a disabled test say) and is not quarantined, it leaves the test so: no entry, no verdict,
 * HEALTHY. Only its last status, last run and first seen move, which the read of a batch applies in SQL as it does a
 * plain failure (test-health.repository.ts, `repeatsSql`).
 */
export function skip(outcome: Pick<RunOutcome, 'status'>): boolean {
  return outcome.status === 'SKIPPED';
}

/** Whether the quarantine holds at `now` (an `until` that passed ends it at once, whatever is stored). */
export function quarantineActive(q: Quarantine | null, now: Date): q is Quarantine {
  return q !== null && (q.until === null || q.until.getTime() > now.getTime());
}

export function stateOf(h: Pick<TestHealth, 'quarantine' | 'flaky' | 'lastStatus'>, now: Date): HealthState {
  if (quarantineActive(h.quarantine, now)) {
    return 'QUARANTINED';
  }
  if (h.flaky) {
    return 'FLAKY';
  }
  return h.lastStatus === 'FAILED' || h.lastStatus === 'BROKEN' ? 'FAILING' : 'HEALTHY';
}

export function newHealth(firstSeenAt: Date): TestHealth {
  return {
    entries: [],
    runs: 0,
    flakeRate: null,
    flaky: false,
    lastStatus: null,
    lastRunId: null,
    firstSeenAt,
    lastFailedAt: null,
    state: 'HEALTHY',
    quarantine: null,
    passes: 0,
    passRun: null,
    releasedRun: null,
  };
}

/** `h` with its quarantine ended (by a person, by passing runs, or by its `until`). */
export function released(h: TestHealth, now: Date): TestHealth {
  const out = { ...h, quarantine: null, passes: 0, passRun: null, releasedRun: h.lastRunId };
  return { ...out, state: stateOf(out, now) };
}

/** `h` quarantined (by a person, or automatically): its passing runs are counted from here. */
export function quarantined(h: TestHealth, q: Quarantine, now: Date): TestHealth {
  const out = { ...h, quarantine: q, passes: 0, passRun: h.lastRunId };
  return { ...out, state: stateOf(out, now) };
}

/**
 * The test's health after `outcome`:
 * - its run's entry replaces the one it had (or is dropped when the outcome is SKIPPED), the window trimmed to the
 *   newest `policy.window` entries; last status, last failure (any failed attempt) and first seen follow;
 * - flakiness by the three rules;
 * - quarantine: an `until` that passed ends it; an automatic one ends after `releaseAfterPasses` consecutive passing
 *   runs (a run passes when its outcome and every attempt passed; a failure starts the count again; a run counts
 *   once); with `autoQuarantine`, a test that is flaky and not quarantined is quarantined when this outcome is new
 *   evidence (it became flaky, or a flaky test failed again), unless it was released and has not failed since.
 */
export function applyOutcome(
  h: TestHealth,
  outcome: RunOutcome,
  policy: FlakyPolicy,
  now: Date,
): { health: TestHealth; transitions: Transitions } {
  const transitions: Transitions = { becameFlaky: false, quarantined: false, released: null };
  const entry: WindowEntry | undefined =
    outcome.status === 'SKIPPED'
      ? undefined
      : {
          run: outcome.run,
          bits: entryBits(outcome.status, outcome.otherStatuses),
          stream: outcome.stream,
          commit: outcome.commit,
        };
  let entries: WindowEntry[];
  const newest = h.entries.length ? h.entries[h.entries.length - 1] : undefined;
  if (entry && (newest === undefined || compareRuns(newest.run, entry.run) < 0)) {
    // The common case: a run after every run of the window.
    const from = Math.max(0, h.entries.length + 1 - policy.window);
    entries = h.entries.slice(from);
    entries.push(entry);
  } else {
    entries = h.entries.filter((e) => e.run !== outcome.run);
    if (entry) {
      const at = entries.findIndex((e) => compareRuns(e.run, entry.run) > 0);
      entries.splice(at < 0 ? entries.length : at, 0, entry);
    }
    entries = entries.slice(-policy.window);
  }
  const latest = h.lastRunId === null || compareRuns(outcome.run, h.lastRunId) >= 0;
  const failed = entry !== undefined && failedIn(entry);
  const verdict = judge(entries, policy);
  let next: TestHealth = {
    ...h,
    entries,
    runs: verdict.runs,
    flakeRate: verdict.flakeRate,
    flaky: verdict.flaky,
    lastStatus: latest ? outcome.status : h.lastStatus,
    lastRunId: latest ? outcome.run : h.lastRunId,
    firstSeenAt: outcome.startedAt < h.firstSeenAt ? outcome.startedAt : h.firstSeenAt,
    lastFailedAt:
      failed && (h.lastFailedAt === null || outcome.startedAt > h.lastFailedAt)
        ? outcome.startedAt
        : h.lastFailedAt,
  };
  transitions.becameFlaky = verdict.flaky && !h.flaky;

  if (next.quarantine && !quarantineActive(next.quarantine, now)) {
    next = { ...released(next, now), releasedRun: h.lastRunId };
    transitions.released = 'EXPIRED';
  }
  if (next.quarantine && entry) {
    if (failed) {
      next = { ...next, passes: 0, passRun: outcome.run };
    } else if (next.passRun === null || compareRuns(outcome.run, next.passRun) > 0) {
      // A passing run (its outcome PASSED, no attempt failed: `failed` is false and the entry is not SKIPPED).
      next = { ...next, passes: next.passes + 1, passRun: outcome.run };
    }
    if (next.quarantine?.auto && next.passes >= policy.releaseAfterPasses) {
      next = { ...released(next, now), releasedRun: outcome.run };
      transitions.released = 'PASSES';
    }
  }
  if (policy.autoQuarantine && verdict.flaky && !next.quarantine && (transitions.becameFlaky || failed)) {
    const releasedRun = next.releasedRun;
    const failedSinceRelease =
      releasedRun === null || entries.some((e) => compareRuns(e.run, releasedRun) > 0 && failedIn(e));
    if (failedSinceRelease) {
      next = quarantined(
        next,
        { since: now, reason: `Flaky: ${verdict.why}`, auto: true, byUserId: null, until: null },
        now,
      );
      next = { ...next, passRun: outcome.run };
      transitions.quarantined = true;
      if (transitions.released === 'PASSES') {
        transitions.released = null;
      }
    }
  }
  next.state = stateOf(next, now);
  return { health: next, transitions };
}
