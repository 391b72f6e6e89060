/**
 * What the gate knows of each outcome `r` of the run it evaluates, as SQL over `results r`: the one place that says
 * which outcomes a quarantine or a known issue leaves out, and which failures are new. GateRepository.tally counts
 * with it; the quarantine (test health) and the failure signatures (triage) each own one expression here.
 *
 * Parameters: `$1` the run; `$2` ignoreQuarantined and `$3` ignoreKnownIssues (see tallySql).
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

/** A failing outcome: only those have a signature (failure_results has a row for each failing result). */
const FAILING = `r.status IN ('FAILED', 'BROKEN')`;

export const OUTCOME_FACTS: OutcomeFacts = {
  // A failing result's signature, by failure_results' key (run, result), then the signature by its id.
  joins: `LEFT JOIN failure_results fr ON fr.run_id = r.run_id AND fr.result_id = r.id
          LEFT JOIN failure_signatures fs ON fs.id = fr.signature_id`,
  // Quarantined now, as test health says it (src/stability/flakiness.ts, quarantineActive): an `until` that passed
  // ends it at once, before the sweep clears it. The project's quarantined tests are read once, by
  // ix_test_health_state (a quarantine in force is always stored with that state), and hashed: a join to test_health
  // probed its primary key for every outcome of the run (an import of 20,000 tests: 60,000 buffers, ~30 ms), and
  // a join to those few rows was planned, on a results table whose statistics lag, as a nested loop over them for
  // every outcome (2,000 quarantined tests: 4 s).
  quarantined: `r.test_id IN (
      SELECT th.test_id FROM test_health th
       WHERE th.project_id = (SELECT project_id FROM runs WHERE id = $1) AND th.state = 'QUARANTINED'
         AND th.q_since IS NOT NULL AND (th.q_until IS NULL OR th.q_until > now()))`,
  // Known as the signature is now (a triage changes it for every occurrence, past and future): an issue, or a
  // person's (or a suggestion's) triage other than TO_INVESTIGATE.
  knownIssue: `${FAILING} AND coalesce(fs.issue_url IS NOT NULL OR fs.triage <> 'TO_INVESTIGATE', false)`,
  // New (API.md, "Failure triage": first seen in this run) and still TO_INVESTIGATE. A stream's first run's
  // failures are news too: the signature is the project's, not the stream's.
  newFailure: `${FAILING} AND coalesce(fs.first_run_id = r.run_id AND fs.triage = 'TO_INVESTIGATE', false)`,
};

/**
 * The outcomes of run `$1` and the gate's facts of each, then counted: `counts` is the one predicate of whether an
 * outcome counts against the gate, given `$2` ignoreQuarantined and `$3` ignoreKnownIssues. A quarantined test's
 * outcome is left out whatever its status; a known issue is a failure's (a quarantine is said first, so an outcome
 * is left out for one reason only). Reads the run's outcomes by its index (ix_results_run_status), each fact by key,
 * once an outcome (`o` is materialized: inlined, each of the counts below evaluated the facts again, and built its own
 * hash of the quarantined tests).
 */
export function tallySql(facts: OutcomeFacts = OUTCOME_FACTS): string {
  return `
    WITH o AS MATERIALIZED (
      SELECT r.status, (${facts.quarantined}) AS quarantined, (${facts.knownIssue}) AS known,
             (${facts.newFailure}) AS new_failure
        FROM results r ${facts.joins}
       WHERE r.run_id = $1 AND r.outcome
    ), c AS (
      SELECT status, new_failure, $2::boolean AND quarantined AS left_quarantined,
             $3::boolean AND known AND NOT ($2::boolean AND quarantined) AS left_known
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
