import type { RunCounts } from '../api/client';
import { counted } from './components';

const PARTS: [keyof RunCounts, string][] = [
  ['passed', 'passed'],
  ['failed', 'failed'],
  ['broken', 'broken'],
  ['skipped', 'skipped'],
];

/** The counts of each outcome in words: "1 passed, 1 failed, 0 broken, 1 skipped". */
export function outcomesInWords(counts: RunCounts): string {
  return PARTS.map(([key, name]) => `${counts[key].toLocaleString()} ${name}`).join(', ');
}

/** A run's counts in words: "3 results: 1 passed, 1 failed, 0 broken, 1 skipped". */
export function countsInWords(counts: RunCounts): string {
  return `${counted(counts.total, 'result')}: ${outcomesInWords(counts)}`;
}

/** A run's counts as a stacked bar, with the numbers as its text alternative. */
export function CountBar({ counts }: { counts: RunCounts }) {
  return (
    <div className="countbar" role="img" aria-label={countsInWords(counts)} title={outcomesInWords(counts)}>
      {counts.total === 0 ? (
        <span className="countbar-empty" />
      ) : (
        PARTS.filter(([key]) => counts[key] > 0).map(([key]) => (
          <span
            key={key}
            className={`countbar-${key}`}
            style={{ width: `${(100 * counts[key]) / counts.total}%` }}
          />
        ))
      )}
    </div>
  );
}

/**
 * passed ÷ (passed + failed + broken) in percent, floored to one decimal: 299 of 300 is 99.6, never 100 (rounding
 * would call a run with a failure a clean one); null when none of them ran. The one place a pass rate is rounded:
 * the runs' figures and the trend chart's points agree.
 */
export function passPercent(counts: RunCounts): number | null {
  const ran = counts.passed + counts.failed + counts.broken;
  if (ran === 0) {
    return null;
  }
  // Whole numbers before dividing by 10: 1000 × passed ÷ ran is exact where the rate ends in one decimal.
  return Math.floor((1000 * counts.passed) / ran) / 10;
}

/** The pass rate as text: "99.6%", or "—" when nothing passed, failed or broke. */
export function passRate(counts: RunCounts): string {
  const percent = passPercent(counts);
  return percent === null ? '—' : `${percent}%`;
}

/** The pass rate, coloured by how good it is: all passed, most, or fewer. */
export function PassRate({ counts }: { counts: RunCounts }) {
  const ran = counts.passed + counts.failed + counts.broken;
  const rate = ran > 0 ? counts.passed / ran : null;
  const tone = rate === null ? '' : rate === 1 ? 'rate-good' : rate >= 0.9 ? 'rate-fair' : 'rate-poor';
  return <span className={`rate ${tone}`}>{passRate(counts)}</span>;
}
