import { CHANGES_SQL } from '../insights/changes.js';

/**
 * What the gate knows of each outcome `r` of the run it evaluates, as SQL over `results r`: the one place that says
 * which outcomes a quarantine or a known issue leaves out, and which failures are new. GateRepository.tally counts
 * with it; the quarantine (test health) and the failure signatures (triage) each change one expression here.
 *
 * Parameters: `$1` the run, `$2` the run before it in its stream (null when none), `$3` whether the two are of one
 * code revision (src/insights/changes.ts, sameRevision), `$6` whether noNewFailures is checked (when not, what
 * only new failures need is not read).
 */
export interface OutcomeFacts {
  /** Joined to `results r` (each at most one row an outcome). */
  joins: string;
  /** The outcome's test is quarantined now (API.md, "Test health"; its row of test_health). */
  quarantined: string;
  /** A failure whose signature has an issue, or a triage other than TO_INVESTIGATE. */
  knownIssue: string;
  /** A failure the gate's noNewFailures counts. */
  newFailure: string;
}

export const OUTCOME_FACTS: OutcomeFacts = {
  // Until failure signatures exist, a new failure is what compare calls NEW_FAILURE against the run before in the
  // stream (runs.count_new_failures counts the same), and there is no known issue to leave out.
  joins: `LEFT JOIN test_health th ON th.test_id = r.test_id
          LEFT JOIN (${CHANGES_SQL}) ch ON $6::boolean AND ch.test_id = r.test_id`,
  // Quarantined now, as test health says it (src/stability/flakiness.ts, quarantineActive): an `until` that passed
  // ends it at once, before the sweep clears it.
  quarantined: `th.q_since IS NOT NULL AND (th.q_until IS NULL OR th.q_until > now())`,
  knownIssue: 'false',
  newFailure: `coalesce(ch.change = 'NEW_FAILURE', false)`,
};

/**
 * The outcomes of run `$1` and the gate's facts of each, then counted: `counts` is the one predicate of whether an
 * outcome counts against the gate, given `$4` ignoreQuarantined and `$5` ignoreKnownIssues (and `$6`, above). A quarantined test's
 * outcome is left out whatever its status; a known issue is a failure's (a quarantine is said first, so an outcome
 * is left out for one reason only). Reads the run's outcomes by its index (ix_results_run_status), each fact by key.
 */
export function tallySql(facts: OutcomeFacts = OUTCOME_FACTS): string {
  return `
    WITH o AS (
      SELECT r.status, (${facts.quarantined}) AS quarantined, (${facts.knownIssue}) AS known,
             (${facts.newFailure}) AS new_failure
        FROM results r ${facts.joins}
       WHERE r.run_id = $1 AND r.outcome
    ), c AS (
      SELECT status, new_failure, $4::boolean AND quarantined AS left_quarantined,
             $5::boolean AND known AND NOT ($4::boolean AND quarantined) AS left_known
        FROM o
    )
    SELECT count(*)::int AS ran,
           count(*) FILTER (WHERE status = 'PASSED' AND NOT left_quarantined AND NOT left_known)::int AS passed,
           count(*) FILTER (WHERE status = 'FAILED' AND NOT left_quarantined AND NOT left_known)::int AS failed,
           count(*) FILTER (WHERE status = 'BROKEN' AND NOT left_quarantined AND NOT left_known)::int AS broken,
           count(*) FILTER (WHERE status = 'SKIPPED' AND NOT left_quarantined AND NOT left_known)::int AS skipped,
           count(*) FILTER (WHERE new_failure AND NOT left_quarantined AND NOT left_known)::int AS new_failures,
           count(*) FILTER (WHERE left_quarantined AND status <> 'SKIPPED')::int AS ignored_quarantined,
           count(*) FILTER (WHERE left_known)::int AS ignored_known_issues
      FROM c`;
}
