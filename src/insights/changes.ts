import type { EntityManager } from 'typeorm';

/**
 * How a test changed from a base run to a head run: the one definition that compare
 * (GET /api/runs/{runId}/compare) and a run's stored `newFailures` (written as the run finishes) share.
 */
export const CHANGES = [
  'NEW_FAILURE',
  'FIXED',
  'STILL_FAILING',
  'FLAKY',
  'ADDED',
  'REMOVED',
  'UNCHANGED',
] as const;
export type Change = (typeof CHANGES)[number];

/**
 * Each test's outcome in one run (its last attempt, see src/results/attempts.ts), and whether it both passed and
 * failed within the run (a retry that passed): one row a test, by the run's index (ix_results_run_status).
 */
const OUTCOMES = (run: string) => `
  SELECT test_id, status, id AS last_id,
         (status = 'PASSED' AND other_statuses & 6 <> 0) OR (status IN ('FAILED', 'BROKEN') AND other_statuses & 1 <> 0) AS flaky
    FROM results WHERE run_id = ${run} AND outcome`;

/**
 * The changes of every test of either run. `$1` the head run, `$2` the base run, `$3` whether both runs are of one
 * code revision (sameRevision below): then an outcome that flipped is the test's flakiness, not a change of the
 * code, and counts as FLAKY. Reads the two runs' outcomes only, each by its run's index.
 */
export const CHANGES_SQL = `
  WITH h AS (${OUTCOMES('$1')}), b AS (${OUTCOMES('$2')})
  SELECT coalesce(h.test_id, b.test_id) AS test_id, coalesce(h.last_id, b.last_id) AS last_id,
         CASE WHEN h.test_id IS NULL THEN $2::bigint ELSE $1::bigint END AS last_run_id,
         b.status AS base_status, h.status AS head_status,
         CASE WHEN b.test_id IS NULL THEN 'ADDED'
              WHEN h.test_id IS NULL THEN 'REMOVED'
              WHEN h.flaky OR b.flaky THEN 'FLAKY'
              WHEN $3::boolean AND (h.status IN ('FAILED', 'BROKEN')) <> (b.status IN ('FAILED', 'BROKEN'))
                   AND 'PASSED' IN (h.status, b.status) THEN 'FLAKY'
              WHEN h.status IN ('FAILED', 'BROKEN') AND b.status IN ('FAILED', 'BROKEN') THEN 'STILL_FAILING'
              WHEN h.status IN ('FAILED', 'BROKEN') THEN 'NEW_FAILURE'
              WHEN b.status IN ('FAILED', 'BROKEN') THEN 'FIXED'
              ELSE 'UNCHANGED' END AS change
    FROM h FULL JOIN b ON b.test_id = h.test_id`;

/**
 * The number of CHANGES_SQL's NEW_FAILURE rows, same parameters, read from the head run's failing outcomes alone
 * (ix_results_run_status), each with its test's outcome in the base run by uq_results_test_run_outcome: a failure
 * that is not flaky (no attempt passed), of a test whose base outcome neither failed nor was flaky, and which is not
 * a flip on one revision (a base that passed). Where CHANGES_SQL reads and joins every outcome of both runs (210 ms
 * for two runs of 100,000 tests), this reads their failures (test/integration/insights/new-failures-count.spec.ts
 * holds the two equal).
 */
export const NEW_FAILURES_SQL = `
  SELECT count(*) FROM results h
    JOIN results b ON b.test_id = h.test_id AND b.run_id = $2 AND b.outcome
   WHERE h.run_id = $1 AND h.outcome AND h.status IN ('FAILED', 'BROKEN') AND h.other_statuses & 1 = 0
     AND (b.status = 'SKIPPED' OR (b.status = 'PASSED' AND b.other_statuses & 6 = 0 AND NOT $3::boolean))`;

/**
 * The run before `$1` (API.md, "Streams"): the finished run of its stream started last before it, by
 * ix_runs_project_stream_started; with both runs' attributes, for sameRevision.
 */
export const PREVIOUS_RUN_SQL = `
  SELECT p.id, p.attributes AS base_attributes, r.attributes AS head_attributes FROM runs r
    CROSS JOIN LATERAL (
      SELECT id, attributes FROM runs
       WHERE project_id = r.project_id AND stream = r.stream AND status = 'FINISHED'
         AND (started_at, id) < (r.started_at, r.id)
       ORDER BY started_at DESC, id DESC LIMIT 1) p
   WHERE r.id = $1`;

/** Both runs are of one code revision: the same non-empty `commit` attribute. */
export function sameRevision(
  head: { attributes: Record<string, string> },
  base: { attributes: Record<string, string> } | null,
): boolean {
  const commit = head.attributes.commit;
  return !!base && !!commit && base.attributes.commit === commit;
}

/**
 * Stores the run's `newFailures` (runs.count_new_failures) as it finishes, inside the transaction that finishes it:
 * the tests NEW_FAILURE against the run before in its stream, as compare counts them by default; null when there is
 * no run before. Computed once: a run finished later that sorts before this one in its stream does not change it.
 */
export async function storeNewFailures(tx: EntityManager, runId: string): Promise<void> {
  const before: {
    id: string;
    base_attributes: Record<string, string>;
    head_attributes: Record<string, string>;
  }[] = await tx.query(PREVIOUS_RUN_SQL, [runId]);
  if (!before.length) {
    await tx.query('UPDATE runs SET count_new_failures = NULL WHERE id = $1', [runId]);
    return;
  }
  const [base] = before;
  const same = sameRevision({ attributes: base.head_attributes }, { attributes: base.base_attributes });
  await tx.query(`UPDATE runs SET count_new_failures = (${NEW_FAILURES_SQL}) WHERE id = $1`, [
    runId,
    base.id,
    same,
  ]);
}
