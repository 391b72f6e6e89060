import type { Quarantine, TestState } from '../api/client';
import { formatDate } from './components';

/** A test state in words, as the badges and filters say it. */
export const STATE_LABELS: Record<TestState, string> = {
  HEALTHY: 'healthy',
  FAILING: 'failing',
  FLAKY: 'flaky',
  QUARANTINED: 'quarantined',
};

/** What each state means, for a badge's title and the filter's hints. */
export const STATE_MEANINGS: Record<TestState, string> = {
  HEALTHY: 'Its last outcome passed (or was skipped), and it is not flaky',
  FAILING: 'Its last outcome failed or broke, and it is not flaky',
  FLAKY: 'It both passed and failed on the same code, or flips often, in the recent runs it ran in',
  QUARANTINED: 'Quarantined: it still runs, but does not count against the quality gate',
};

/** A test's state as a badge: its word (never colour alone), its meaning on hover. */
export function StateBadge({ state, auto = false }: { state: TestState; auto?: boolean }) {
  return (
    <span className={`badge state-badge state-${state.toLowerCase()}`} title={STATE_MEANINGS[state]}>
      {STATE_LABELS[state]}
      {auto && state === 'QUARANTINED' ? <AutoMark /> : null}
    </span>
  );
}

/** Marks a quarantine the flaky tests policy set (and will lift after enough passing runs). */
export function AutoMark() {
  return (
    <span
      className="auto-mark"
      title="Quarantined automatically by the flaky tests policy; released after enough passing runs"
    >
      {' '}
      · auto
    </span>
  );
}

/** A flake rate (0..1) as a percentage, "—" while the test has not run twice. */
export function formatFlakeRate(rate: number | null | undefined): string {
  if (rate === null || rate === undefined) {
    return '—';
  }
  const pct = rate * 100;
  // 0.4 % is not 0 %: a test that flipped once in 250 runs did flip.
  return `${pct > 0 && pct < 1 ? pct.toFixed(1) : Math.round(pct)} %`;
}

/** The flake rate with the runs it is over: "25 % over 9 runs"; why there is none when there is none. */
export function FlakeRate({ rate, runs }: { rate: number | null | undefined; runs: number | undefined }) {
  if (rate === null || rate === undefined) {
    return (
      <span className="hint" title="A flake rate needs two runs of the test">
        —<span className="visually-hidden"> (not run twice yet)</span>
      </span>
    );
  }
  return (
    <span className={rate > 0 ? 'flake-rate flaky' : 'flake-rate'}>
      {formatFlakeRate(rate)}
      {runs !== undefined ? <span className="hint"> over {runs.toLocaleString()} runs</span> : null}
    </span>
  );
}

/** A quarantine's time span in words: "since <date>, until <date>" (or "with no end date"). */
export function quarantineSpan(q: Quarantine): string {
  return `since ${formatDate(q.since)}${q.until ? `, until ${formatDate(q.until)}` : ', with no end date'}`;
}

/**
 * A test marked flaky or quarantined where results are listed (the run page, compare): a short word beside its
 * name; nothing for a healthy or failing test (their status already shows).
 */
export function TestMark({ state, auto }: { state?: TestState; auto?: boolean }) {
  if (state !== 'FLAKY' && state !== 'QUARANTINED') {
    return null;
  }
  return (
    <span
      className={`badge test-mark state-${state.toLowerCase()}`}
      title={`${STATE_MEANINGS[state]}${auto ? ' (automatically, by the flaky tests policy)' : ''}`}
    >
      {STATE_LABELS[state]}
    </span>
  );
}
