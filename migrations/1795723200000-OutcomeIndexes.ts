import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Two indexes per ordinary result again, as before outcomes. Attempts1795719600000 added a third,
 * uq_results_run_test_outcome (run_id, test_id) WHERE outcome, beside ix_results_run_status (run_id, status, id) and
 * ix_results_test_history (test_id, id DESC): measured, about a quarter more time per inserted row, and the V1 and
 * import reruns of the bench fell to 0.75-0.88 of their figures before outcomes.
 *
 * Both by-test indexes become one unique partial index of outcomes by test and run, uq_results_test_run_outcome
 * (test_id, run_id) WHERE outcome: still unique per run and test (a writer's COPY still fails on a second outcome
 * of a test in a run, which is how it learns the test already has an attempt there), and it serves every read of a
 * test's history, which reads outcomes one a run (newest first by run_id: runs' ids grow with their creation). The
 * rare earlier attempts (outcome false) get a small partial index of their own, ix_results_test_attempts, so a
 * test's attempts in a run are read by the two together.
 *
 * A read of a test's results that does not say outcome or not uses neither, so each such read asks for the two
 * kinds apart: among them the trigger that deletes the results of deleted test cases (ResultsWritePath1764600000000),
 * which would otherwise scan every result of every project once per deletion of a project.
 *
 * Created before dropped, so that no moment lacks an index the reads use.
 */
export class OutcomeIndexes1795723200000 implements MigrationInterface {
  name = 'OutcomeIndexes1795723200000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE UNIQUE INDEX uq_results_test_run_outcome ON results (test_id, run_id) WHERE outcome`,
    );
    await q.query(`CREATE INDEX ix_results_test_attempts ON results (test_id, run_id) WHERE NOT outcome`);
    await q.query(`DROP INDEX uq_results_run_test_outcome`);
    await q.query(`DROP INDEX ix_results_test_history`);
    await q.query(`
      CREATE OR REPLACE FUNCTION results_delete_with_test_cases() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        DELETE FROM results r USING gone g WHERE r.test_id = g.id AND r.outcome;
        DELETE FROM results r USING gone g WHERE r.test_id = g.id AND NOT r.outcome;
        RETURN NULL;
      END $$`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE OR REPLACE FUNCTION results_delete_with_test_cases() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        DELETE FROM results r USING gone g WHERE r.test_id = g.id;
        RETURN NULL;
      END $$`);
    await q.query(`CREATE INDEX ix_results_test_history ON results (test_id, id DESC)`);
    await q.query(
      `CREATE UNIQUE INDEX uq_results_run_test_outcome ON results (run_id, test_id) WHERE outcome`,
    );
    await q.query(`DROP INDEX ix_results_test_attempts`);
    await q.query(`DROP INDEX uq_results_test_run_outcome`);
  }
}
