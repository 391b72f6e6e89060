import { DataSource } from 'typeorm';
import { dataSourceOptions } from '../../../src/database/data-source-options.js';
import { GateRepository } from '../../../src/gates/gate.repository.js';
import { tallySql } from '../../../src/gates/gate-counting.js';
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

  it('leaves out the outcomes of tests quarantined now, and only those', async () => {
    const tally = await db.transaction((tx) =>
      gates.tally(tx, runId, { ignoreQuarantined: true, ignoreKnownIssues: false }),
    );
    // 997 quarantined now (1,000 less the 3 whose `until` passed), 100 of them failing.
    expect(tally.ignored.quarantined).toBe(997);
    expect(tally.ran).toBe(TESTS);
    expect(tally.passed + tally.failed).toBe(TESTS - 997);
    expect(tally.failed).toBe(500 - 100);
    const counted = await db.transaction((tx) =>
      gates.tally(tx, runId, { ignoreQuarantined: false, ignoreKnownIssues: false }),
    );
    expect(counted.ignored.quarantined).toBe(0);
    expect(counted.failed).toBe(500);
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
});
