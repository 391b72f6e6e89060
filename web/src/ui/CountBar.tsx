import type { RunCounts } from '../api/client';

const PARTS: [keyof RunCounts, string][] = [
  ['passed', 'passed'],
  ['failed', 'failed'],
  ['broken', 'broken'],
  ['skipped', 'skipped'],
];

/** A run's counts as a stacked bar, with the numbers as its text alternative. */
export function CountBar({ counts }: { counts: RunCounts }) {
  const label = PARTS.map(([key, name]) => `${counts[key]} ${name}`).join(', ');
  return (
    <div className="countbar" role="img" aria-label={`${counts.total} results: ${label}`} title={label}>
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

export function passRate(counts: RunCounts): string {
  const ran = counts.total - counts.skipped;
  return ran > 0 ? `${Math.round((100 * counts.passed) / ran)}%` : '—';
}
