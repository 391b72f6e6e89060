import type { ProjectSettings } from '../common/project-settings.js';

export type GateSettings = ProjectSettings['gate'];
export const GATE_STATUSES = ['PASSED', 'FAILED', 'PENDING', 'OFF'] as const;
export type GateStatus = (typeof GATE_STATUSES)[number];
export const CONDITION_NAMES = ['maxFailed', 'minPassRate', 'minTotal', 'noNewFailures'] as const;
export type ConditionName = (typeof CONDITION_NAMES)[number];

/** One condition as the gate reports it: what the settings ask for, what the run had, and whether that holds. */
export interface GateCondition {
  name: ConditionName;
  /** maxFailed: the most failures allowed; minPassRate: the lowest percent; minTotal: the fewest tests; noNewFailures: 0. */
  expected: number;
  /** minPassRate: null when no test that counts passed, failed or broke (nothing to take a rate of). */
  actual: number | null;
  passed: boolean;
}

/**
 * What the gate reads of a finished run's outcomes (one a test, see src/results/attempts.ts), counted in SQL by
 * GateRepository.tally: the outcomes that count (not left out by ignoreQuarantined or ignoreKnownIssues) by
 * status, and what was left out.
 */
export interface GateTally {
  /** Every test that ran (outcomes, skipped included), left out or not. */
  ran: number;
  passed: number;
  failed: number;
  broken: number;
  skipped: number;
  /** New failures that count: see gate-counting.ts for what makes a failure new. */
  newFailures: number;
  ignored: { quarantined: number; knownIssues: number };
}

export interface GateVerdict {
  status: Exclude<GateStatus, 'PENDING'>;
  conditions: GateCondition[];
}

/** The percent of passed among passed + failed + broken, floored to two decimals for showing; null when none. */
export function passPercent(t: Pick<GateTally, 'passed' | 'failed' | 'broken'>): number | null {
  const ran = t.passed + t.failed + t.broken;
  return ran === 0 ? null : Math.floor((t.passed * 10_000) / ran) / 100;
}

/**
 * The gate over a finished run's tally (API.md, "Quality gate"). Only the conditions the settings set are checked
 * and reported (a null threshold, or noNewFailures false, is not checked); the gate FAILED when any of them does not
 * hold, PASSED otherwise (also with none set), OFF when disabled. What the ignore settings leave out was left out of
 * the tally already, except for minTotal: a test left out still ran, and the gate does not fail a run for having
 * ignored one (a quarantined test "only stops counting against the quality gate").
 */
export function evaluateGate(settings: GateSettings, tally: GateTally): GateVerdict {
  if (!settings.enabled) {
    return { status: 'OFF', conditions: [] };
  }
  const conditions: GateCondition[] = [];
  if (settings.maxFailed !== null) {
    const failed = tally.failed + tally.broken;
    conditions.push({
      name: 'maxFailed',
      expected: settings.maxFailed,
      actual: failed,
      passed: failed <= settings.maxFailed,
    });
  }
  if (settings.minPassRate !== null) {
    const ran = tally.passed + tally.failed + tally.broken;
    conditions.push({
      name: 'minPassRate',
      expected: settings.minPassRate,
      actual: passPercent(tally),
      // On the exact rate, not the floored one shown; with nothing to rate, nothing fell short (minTotal is the
      // condition that asks for tests).
      passed: ran === 0 || tally.passed * 100 >= settings.minPassRate * ran,
    });
  }
  if (settings.minTotal !== null) {
    conditions.push({
      name: 'minTotal',
      expected: settings.minTotal,
      actual: tally.ran,
      passed: tally.ran >= settings.minTotal,
    });
  }
  if (settings.noNewFailures) {
    conditions.push({
      name: 'noNewFailures',
      expected: 0,
      actual: tally.newFailures,
      passed: tally.newFailures === 0,
    });
  }
  return { status: conditions.every((c) => c.passed) ? 'PASSED' : 'FAILED', conditions };
}
