/**
 * What the gate knows of each outcome `r` of the run it evaluates, as SQL over `results r`: the one place that says
 * which outcomes a quarantine or a known issue leaves out, and which failures are new. Only a failing outcome can be a
 * known issue or a new failure (tallySql reads the others only where their test is quarantined). GateRepository.tally counts
 * with it; the quarantine (test health) and the failure signatures (triage) each own one expression here.
 *
 * Parameters: `$1` the run; `$2` ignoreQuarantined and `$3` ignoreKnownIssues (see tallySql).
 */
export interface OutcomeFacts {
  /** Joined to `results r` (each at most one row an outcome). */
  joins: string;
  /** The project's tests quarantined now (API.md, "Test health"; their rows of test_health), as `SELECT test_id …`. */
  quarantinedTests: string;
  /** A failure whose signature has an issue, or a triage other than TO_INVESTIGATE. */
  knownIssue: string;
  /** A failure the gate's noNewFailures counts. */
  newFailure: string;
}

/** A failing outcome: only those have a signature (failure_results has a row for each failing result). */
const FAILING = `r.status IN ('FAILED', 'BROKEN')`;

export const OUTCOME_FACTS: OutcomeFacts = {
  // A failing result's signature, by failure_results' key (run, result), then the signature by its id.
  joins: `LEFT JOIN failure_results fr ON fr.run_id = r.run_id AND fr.result_id = r.id
          LEFT JOIN failure_signatures fs ON fs.id = fr.signature_id`,
  // Quarantined now, as test health says it (src/stability/flakiness.ts, quarantineActive): an `until` that passed
  // ends it at once, before the sweep clears it. Read once, by ix_test_health_state (a quarantine in force is always
  // stored with that state), and hashed where the run's failures are tested against them: a join to test_health
  // probed its primary key for every outcome of the run (an import of 20,000 tests: 60,000 buffers, ~30 ms), and
  // a join to those few rows was planned, on a results table whose statistics lag, as a nested loop over them for
  // every outcome (2,000 quarantined tests: 4 s).
  quarantinedTests: `SELECT th.test_id FROM test_health th
       WHERE th.project_id = (SELECT project_id FROM runs WHERE id = $1) AND th.state = 'QUARANTINED'
         AND th.q_since IS NOT NULL AND (th.q_until IS NULL OR th.q_until > now())`,
  // Known as the signature is now (a triage changes it for every occurrence, past and future): an issue, or a
  // person's (or a suggestion's) triage other than TO_INVESTIGATE.
  knownIssue: `${FAILING} AND coalesce(fs.issue_url IS NOT NULL OR fs.triage <> 'TO_INVESTIGATE', false)`,
  // New (API.md, "Failure triage": first seen in this run) and still TO_INVESTIGATE. A stream's first run's
  // failures are news too: the signature is the project's, not the stream's.
  newFailure: `${FAILING} AND coalesce(fs.first_run_id = r.run_id AND fs.triage = 'TO_INVESTIGATE', false)`,
};

/**
 * The run `$1`'s outcomes counted as the gate counts them, given `$2` ignoreQuarantined and `$3` ignoreKnownIssues: a
 * quarantined test's outcome is left out whatever its status; a known issue is a failure's (a quarantine is said
 * first, so an outcome is left out for one reason only); a new failure counts unless left out.
 * The run's counts (runs.count_*: its outcomes by status, kept by the writer as it stores them) are the start, and only
 * the outcomes that can change them are read: its failures (by ix_results_run_status), the only outcomes that can be
 * known issues or new failures, each with its facts by key; and the outcomes of the project's quarantined tests (read
 * once, `q`, and each probed by uq_results_test_run_outcome). A run of 100,000 outcomes, a tenth failing: ~15 ms,
 * where reading every outcome with its facts took ~110 ms (`o` is materialized: inlined, each count below evaluated
 * the facts again).
 */
export function tallySql(facts: OutcomeFacts = OUTCOME_FACTS): string {
  return `
    WITH q AS MATERIALIZED (${facts.quarantinedTests}
    ), o AS MATERIALIZED (
      SELECT r.status, r.test_id IN (SELECT q.test_id FROM q) AS quarantined, (${facts.knownIssue}) AS known,
             (${facts.newFailure}) AS new_failure
        FROM results r ${facts.joins}
       WHERE r.run_id = $1 AND r.outcome AND ${FAILING}
      UNION ALL
      SELECT r.status, true, false, false
        FROM q CROSS JOIN LATERAL (
               SELECT r.status FROM results r WHERE r.test_id = q.test_id AND r.run_id = $1 AND r.outcome LIMIT 1) r
       WHERE NOT ${FAILING}
    ), c AS (
      SELECT status, new_failure, $2::boolean AND quarantined AS left_quarantined,
             $3::boolean AND known AND NOT ($2::boolean AND quarantined) AS left_known
        FROM o
    ), n AS (
      SELECT count(*) FILTER (WHERE status = 'PASSED' AND (left_quarantined OR left_known))::int AS passed,
             count(*) FILTER (WHERE status = 'FAILED' AND (left_quarantined OR left_known))::int AS failed,
             count(*) FILTER (WHERE status = 'BROKEN' AND (left_quarantined OR left_known))::int AS broken,
             count(*) FILTER (WHERE status = 'SKIPPED' AND (left_quarantined OR left_known))::int AS skipped,
             count(*) FILTER (WHERE new_failure AND NOT left_quarantined AND NOT left_known)::int AS new_failures,
             count(*) FILTER (WHERE left_quarantined AND status <> 'SKIPPED')::int AS ignored_quarantined,
             count(*) FILTER (WHERE left_known)::int AS ignored_known_issues
        FROM c
    )
    SELECT ru.count_total AS ran, ru.count_passed - n.passed AS passed, ru.count_failed - n.failed AS failed,
           ru.count_broken - n.broken AS broken, ru.count_skipped - n.skipped AS skipped, n.new_failures,
           n.ignored_quarantined, n.ignored_known_issues
      FROM runs ru CROSS JOIN n
     WHERE ru.id = $1`;
}
