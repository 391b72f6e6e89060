/**
 * A run's summary as read straight from `runs` (the project list's latest run, the pass-rate trend): the columns,
 * the row they give, and the counts and pass rate made of it.
 */
export const RUN_SUMMARY_COLUMNS = `id, name, status, started_at, finished_at, count_total AS total, count_passed AS passed,
  count_failed AS failed, count_broken AS broken, count_skipped AS skipped`;

export interface RunSummaryRow {
  id: string;
  name: string;
  status: 'IN_PROGRESS' | 'FINISHED';
  started_at: Date;
  finished_at: Date | null;
  total: number;
  passed: number;
  failed: number;
  broken: number;
  skipped: number;
}

export function countsOf(r: RunSummaryRow): {
  counts: { total: number; passed: number; failed: number; broken: number; skipped: number };
  /** passed ÷ (total − skipped), 0..1; null when nothing ran. */
  passRate: number | null;
} {
  const ran = r.total - r.skipped;
  return {
    counts: { total: r.total, passed: r.passed, failed: r.failed, broken: r.broken, skipped: r.skipped },
    passRate: ran > 0 ? r.passed / ran : null,
  };
}
