import type { RunCounts } from '../results/result-input.js';

/**
 * A run's summary as read straight from `runs` (the project list's latest run, the pass-rate trend): the columns,
 * the row they give, and the counts and pass rate made of it.
 */
export const RUN_SUMMARY_COLUMNS = `id, name, status, stream, started_at, finished_at, count_total AS total, count_passed AS passed,
  count_failed AS failed, count_broken AS broken, count_skipped AS skipped, count_passed_on_retry AS passed_on_retry,
  count_attempts AS attempts`;

export interface RunSummaryRow {
  id: string;
  name: string;
  status: 'IN_PROGRESS' | 'FINISHED';
  stream: string;
  started_at: Date;
  finished_at: Date | null;
  total: number;
  passed: number;
  failed: number;
  broken: number;
  skipped: number;
  passed_on_retry: number;
  attempts: number;
}

/** passed ÷ (passed + failed + broken), 0..1 (API.md); null when no test passed or failed. */
export function passRate(c: Pick<RunCounts, 'passed' | 'failed' | 'broken'>): number | null {
  const ran = c.passed + c.failed + c.broken;
  return ran > 0 ? c.passed / ran : null;
}

export function countsOf(r: RunSummaryRow): {
  counts: RunCounts;
  /** See passRate. */
  passRate: number | null;
} {
  const counts: RunCounts = {
    total: r.total,
    passed: r.passed,
    failed: r.failed,
    broken: r.broken,
    skipped: r.skipped,
    passedOnRetry: r.passed_on_retry,
    attempts: r.attempts,
  };
  return { counts, passRate: passRate(counts) };
}

/** A run's summary as the API shows it (a project's or a stream's latest run). */
export function runSummaryOf(r: RunSummaryRow): {
  id: number;
  name: string;
  status: RunSummaryRow['status'];
  stream: string;
  startedAt: string;
  finishedAt: string | null;
  counts: RunCounts;
  passRate: number | null;
} {
  return {
    id: Number(r.id),
    name: r.name,
    status: r.status,
    stream: r.stream,
    startedAt: r.started_at.toISOString(),
    finishedAt: r.finished_at?.toISOString() ?? null,
    ...countsOf(r),
  };
}
