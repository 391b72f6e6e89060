import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The ingest write path without per-row work beyond the indexes:
 * - results lose their foreign keys: each inserted row ran two RI checks (run, test case), more than the row
 *   itself cost. What they guaranteed stays guaranteed: statement-level delete triggers remove the results of
 *   deleted runs and test cases (as ON DELETE CASCADE did), and the writer only inserts results for a run whose
 *   row it updates (row-locks) in the same transaction, so a concurrently deleted run makes the batch fail.
 * - the (project, uuid) unique constraint becomes a partial index: results without a UUID (most of V1) no
 *   longer add a NULL entry to it.
 * - test_cases lose last_status / last_run_id, which forced an UPDATE of every test case on every batch; the
 *   last status is read from the test's newest result instead (ix_results_test_history).
 * - test_cases.identity (an MD5 in hex) becomes a uuid: half the size, and compared as bytes rather than as
 *   blank-padded text, which made looking up a batch's 1000 test cases cost more than storing its results.
 */
export class ResultsWritePath1764600000000 implements MigrationInterface {
  name = 'ResultsWritePath1764600000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE results DROP CONSTRAINT IF EXISTS results_run_id_fkey`);
    await q.query(`ALTER TABLE results DROP CONSTRAINT IF EXISTS results_test_id_fkey`);
    await q.query(`ALTER TABLE results DROP CONSTRAINT uq_results_project_uuid`);
    await q.query(`CREATE UNIQUE INDEX uq_results_project_uuid ON results (project_id, uuid) WHERE uuid IS NOT NULL`);
    await q.query(`ALTER TABLE test_cases DROP COLUMN last_status, DROP COLUMN last_run_id`);
    await q.query(`ALTER TABLE test_cases ALTER COLUMN identity TYPE uuid USING identity::uuid`);

    await q.query(`
      CREATE FUNCTION results_delete_with_runs() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        DELETE FROM results r USING gone g WHERE r.run_id = g.id;
        RETURN NULL;
      END $$`);
    await q.query(`
      CREATE TRIGGER tr_runs_delete_results AFTER DELETE ON runs
        REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION results_delete_with_runs()`);
    await q.query(`
      CREATE FUNCTION results_delete_with_test_cases() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        DELETE FROM results r USING gone g WHERE r.test_id = g.id;
        RETURN NULL;
      END $$`);
    await q.query(`
      CREATE TRIGGER tr_test_cases_delete_results AFTER DELETE ON test_cases
        REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION results_delete_with_test_cases()`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TRIGGER tr_test_cases_delete_results ON test_cases`);
    await q.query(`DROP FUNCTION results_delete_with_test_cases()`);
    await q.query(`DROP TRIGGER tr_runs_delete_results ON runs`);
    await q.query(`DROP FUNCTION results_delete_with_runs()`);
    await q.query(`ALTER TABLE test_cases ALTER COLUMN identity TYPE char(32) USING replace(identity::text, '-', '')`);
    await q.query(`ALTER TABLE test_cases ADD COLUMN last_status varchar(16), ADD COLUMN last_run_id bigint`);
    await q.query(`
      UPDATE test_cases t SET last_status = r.status, last_run_id = r.run_id
        FROM (SELECT DISTINCT ON (test_id) test_id, status, run_id FROM results ORDER BY test_id, id DESC) r
       WHERE r.test_id = t.id`);
    await q.query(`DROP INDEX uq_results_project_uuid`);
    await q.query(`ALTER TABLE results ADD CONSTRAINT uq_results_project_uuid UNIQUE (project_id, uuid)`);
    await q.query(`ALTER TABLE results ADD FOREIGN KEY (run_id) REFERENCES runs (id) ON DELETE CASCADE`);
    await q.query(`ALTER TABLE results ADD FOREIGN KEY (test_id) REFERENCES test_cases (id) ON DELETE CASCADE`);
  }
}
