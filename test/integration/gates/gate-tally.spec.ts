import { DataSource } from 'typeorm';
import { dataSourceOptions } from '../../../src/database/data-source-options.js';
import { GateRepository } from '../../../src/gates/gate.repository.js';
import { OUTCOME_FACTS, tallySql } from '../../../src/gates/gate-counting.js';
import { createTestDatabase, TestDatabase } from '../../support/database.js';

/** The plan of every node in an EXPLAIN (FORMAT JSON) answer, flattened. */
function nodes(plan: { Plans?: unknown[] } & Record<string, unknown>): Record<string, unknown>[] {
  return [plan, ...((plan.Plans ?? []) as (typeof plan)[]).flatMap(nodes)];
}

/**
 * The gate's tally (gate-counting.ts) over a run of 5,000 outcomes: which outcomes a quarantine leaves out, and how
 * PostgreSQL finds them: the project's quarantined tests read once and hashed, not test_health probed (or a join
 * to the quarantined rows looped over) for every outcome, also when the statistics of results lag (as they do
 * right after a big run is written: autovacuum has not analysed it yet).
 */
describe("the gate's tally of a run", () => {
  let database: TestDatabase;
  let db: DataSource;
  let gates: GateRepository;
  let runId: string;
  const TESTS = 5_000;

  beforeAll(async () => {
    database = await createTestDatabase();
    db = await new DataSource(dataSourceOptions(database.url, 2)).initialize();
    gates = new GateRepository(db);
    const [{ id: projectId }] = await db.query(
      `INSERT INTO projects (key, name) VALUES ('TALLY', 'tally') RETURNING id`,
    );
    const [{ id: otherId }] = await db.query(
      `INSERT INTO projects (key, name) VALUES ('OTHER', 'other') RETURNING id`,
    );
    const [run] = await db.query(
      `INSERT INTO runs (project_id, name, status, started_at) VALUES ($1, 'nightly', 'FINISHED', now()) RETURNING id`,
      [projectId],
    );
    runId = String(run.id);
    // The statistics the planner has are those of tables still empty: the run's results come after.
    await db.query('ANALYZE');
    await db.query(
      `INSERT INTO test_cases (project_id, identity, name)
       SELECT $1::bigint, md5('t' || i)::uuid, 't' || i FROM generate_series(1, $2::int) i`,
      [projectId, TESTS],
    );
    // Every tenth test fails; the project's test health: tests 1..1000 quarantined (3 of them until a time that
    // passed, 2 with state QUARANTINED left by a write before the sweep), the rest healthy; another project's tests
    // quarantined too.
    await db.query(
      `INSERT INTO results (run_id, project_id, test_id, name, status)
       SELECT $1, $2, t.id, t.name, CASE WHEN n % 10 = 0 THEN 'FAILED' ELSE 'PASSED' END
         FROM (SELECT id, name, row_number() OVER (ORDER BY id) AS n FROM test_cases WHERE project_id = $2) t`,
      [runId, projectId],
    );
    await storeCounts(runId);
    await db.query(
      `INSERT INTO test_health (test_id, project_id, state, q_since, q_until)
       SELECT t.id, $1, CASE WHEN n <= 1000 THEN 'QUARANTINED' ELSE 'HEALTHY' END,
              CASE WHEN n <= 1000 THEN now() END,
              CASE WHEN n <= 3 THEN now() - interval '1 hour' WHEN n <= 10 THEN now() + interval '1 day' END
         FROM (SELECT id, row_number() OVER (ORDER BY id) AS n FROM test_cases WHERE project_id = $1) t`,
      [projectId],
    );
    await db.query(
      `INSERT INTO test_cases (project_id, identity, name)
       SELECT $1::bigint, md5('o' || i)::uuid, 'o' || i FROM generate_series(1, 100) i`,
      [otherId],
    );
    await db.query(
      `INSERT INTO test_health (test_id, project_id, state, q_since)
       SELECT id, $1, 'QUARANTINED', now() FROM test_cases WHERE project_id = $1`,
      [otherId],
    );
  }, 120_000);
  afterAll(async () => {
    await db?.destroy();
    await database?.drop();
  });

  /** The run's counts (runs.count_*) from its outcomes, as the results writer keeps them. */
  const storeCounts = (run: string) =>
    db.query(
      `UPDATE runs ru SET count_total = c.total, count_passed = c.passed, count_failed = c.failed,
              count_broken = c.broken, count_skipped = c.skipped
         FROM (SELECT count(*)::int AS total, count(*) FILTER (WHERE status = 'PASSED')::int AS passed,
                      count(*) FILTER (WHERE status = 'FAILED')::int AS failed,
                      count(*) FILTER (WHERE status = 'BROKEN')::int AS broken,
                      count(*) FILTER (WHERE status = 'SKIPPED')::int AS skipped
                 FROM results WHERE run_id = $1 AND outcome) c
        WHERE ru.id = $1`,
      [run],
    );

  it('leaves out the outcomes of tests quarantined now, and only those', async () => {
    const tally = await db
      .transaction((tx) => gates.tally(tx, runId, { ignoreQuarantined: true, ignoreKnownIssues: false }))
      .then((t) => t!);
    // 997 quarantined now (1,000 less the 3 whose `until` passed), 100 of them failing.
    expect(tally.ignored.quarantined).toBe(997);
    expect(tally.ran).toBe(TESTS);
    expect(tally.passed + tally.failed).toBe(TESTS - 997);
    expect(tally.failed).toBe(500 - 100);
    const counted = await db
      .transaction((tx) => gates.tally(tx, runId, { ignoreQuarantined: false, ignoreKnownIssues: false }))
      .then((t) => t!);
    expect(counted.ignored.quarantined).toBe(0);
    expect(counted.failed).toBe(500);
  });

  it('answers nothing for a run that is gone (deleted after the gate read it)', async () => {
    await expect(
      db.transaction((tx) =>
        gates.tally(tx, '987654321', { ignoreQuarantined: true, ignoreKnownIssues: true }),
      ),
    ).resolves.toBeUndefined();
  });

  it('reads the quarantined tests once, whatever the statistics say of the run', async () => {
    const [
      {
        'QUERY PLAN': [plan],
      },
    ]: { 'QUERY PLAN': [{ Plan: Record<string, unknown> }] }[] = await db.query(
      `EXPLAIN (ANALYZE, FORMAT JSON) ${tallySql()}`,
      [runId, true, false],
    );
    const onHealth = nodes(plan.Plan).filter((n) => n['Relation Name'] === 'test_health');
    expect(onHealth.map((n) => n['Actual Loops'])).toEqual([1]);
  });
  it('counts what counting every outcome with its facts counts, for every status, quarantine and signature', async () => {
    // A second run of the project's tests with every status, each kind of signature and quarantines of every kind.
    const [projectRow] = await db.query(`SELECT id FROM projects WHERE key = 'TALLY'`);
    const projectId = String(projectRow.id);
    const [run] = await db.query(
      `INSERT INTO runs (project_id, name, status, started_at) VALUES ($1, 'mixed', 'FINISHED', now()) RETURNING id`,
      [projectId],
    );
    const mixed = String(run.id);
    const [earlier] = await db.query(
      `INSERT INTO runs (project_id, name, status, started_at) VALUES ($1, 'earlier', 'FINISHED', now()) RETURNING id`,
      [projectId],
    );
    await db.query(
      `INSERT INTO results (run_id, project_id, test_id, name, status)
       SELECT $1, $2, t.id, t.name, (ARRAY['PASSED', 'FAILED', 'BROKEN', 'SKIPPED', 'PASSED', 'FAILED', 'BROKEN'])[n % 7 + 1]
         FROM (SELECT id, name, row_number() OVER (ORDER BY id) AS n FROM test_cases WHERE project_id = $2) t`,
      [mixed, projectId],
    );
    // An attempt that is not the outcome (a failure retried into a pass): counted by neither.
    await db.query(
      `INSERT INTO results (run_id, project_id, test_id, name, status, outcome)
       SELECT $1, $2, test_id, name, 'FAILED', false FROM results WHERE run_id = $1 AND status = 'PASSED' LIMIT 300`,
      [mixed, projectId],
    );
    await storeCounts(mixed);
    // Signatures: new in this run and to investigate, new but triaged, with an issue, seen before; and failures
    // without one.
    const kinds = [
      { first: mixed, triage: 'TO_INVESTIGATE', issue: null },
      { first: mixed, triage: 'PRODUCT_BUG', issue: null },
      { first: mixed, triage: 'TO_INVESTIGATE', issue: 'https://issues.example.com/1' },
      { first: String(earlier.id), triage: 'TO_INVESTIGATE', issue: null },
      { first: String(earlier.id), triage: 'NO_DEFECT', issue: null },
    ];
    const signatures: string[] = [];
    for (const [k, kind] of kinds.entries()) {
      const [sig] = await db.query(
        `INSERT INTO failure_signatures (project_id, key, first_run_id, first_seen_at, last_run_id, last_seen_at, triage, issue_url)
         VALUES ($1, $2, $3, now(), $3, now(), $4, $5) RETURNING id`,
        [projectId, `key-${k}`, kind.first, kind.triage, kind.issue],
      );
      signatures.push(String(sig.id));
    }
    await db.query(
      `INSERT INTO failure_results (run_id, result_id, signature_id)
       SELECT f.run_id, f.id, ($2::bigint[])[f.k + 1]
         FROM (SELECT r.run_id, r.id, (row_number() OVER (ORDER BY r.id) % 6)::int AS k
                 FROM results r WHERE r.run_id = $1 AND r.outcome AND r.status IN ('FAILED', 'BROKEN')) f
        WHERE f.k < 5`,
      [mixed, signatures],
    );
    // Every outcome with its facts, counted one by one: what the tally counted before it started from the counts.
    const everyOutcome = `
      WITH o AS MATERIALIZED (
        SELECT r.status, r.test_id IN (${OUTCOME_FACTS.quarantinedTests}) AS quarantined,
               (${OUTCOME_FACTS.knownIssue}) AS known, (${OUTCOME_FACTS.newFailure}) AS new_failure
          FROM results r ${OUTCOME_FACTS.joins}
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
    for (const ignoreQuarantined of [false, true]) {
      for (const ignoreKnownIssues of [false, true]) {
        const params = [mixed, ignoreQuarantined, ignoreKnownIssues];
        const [expected] = await db.query(everyOutcome, params);
        const [tallied] = await db.query(tallySql(), params);
        expect({ ignoreQuarantined, ignoreKnownIssues, ...tallied }).toEqual({
          ignoreQuarantined,
          ignoreKnownIssues,
          ...expected,
        });
        // Every kind is there to be counted.
        if (ignoreQuarantined && ignoreKnownIssues) {
          expect(expected.ignored_quarantined).toBeGreaterThan(0);
          expect(expected.ignored_known_issues).toBeGreaterThan(0);
          expect(expected.new_failures).toBeGreaterThan(0);
          expect(expected.skipped).toBeGreaterThan(0);
          expect(expected.broken).toBeGreaterThan(0);
        }
      }
    }
  });
});
