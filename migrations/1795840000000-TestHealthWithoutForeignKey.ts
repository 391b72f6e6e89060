import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * test_health loses its foreign key to test_cases, as results lost theirs (ResultsWritePath1764600000000): each row
 * inserted for a test the project had never seen ran an RI check that locked its new test case FOR KEY SHARE (a
 * second write of that row, WAL included), about a sixth of what storing a new test cost. What it guaranteed stays
 * guaranteed: the statement-level delete trigger of test_cases removes the health of deleted test cases (as ON
 * DELETE CASCADE did, also when a project's deletion cascades to its test cases), the results writer inserts health
 * only for test cases it holds the test-case lock for (test-case-guard.ts: the retention cleanup deletes none
 * meanwhile) or created itself, and a person's quarantine takes that lock and finds the test case first.
 */
export class TestHealthWithoutForeignKey1795840000000 implements MigrationInterface {
  name = 'TestHealthWithoutForeignKey1795840000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE test_health DROP CONSTRAINT IF EXISTS test_health_test_id_fkey`);
    await q.query(`
      CREATE OR REPLACE FUNCTION results_delete_with_test_cases() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        DELETE FROM results r USING gone g WHERE r.test_id = g.id AND r.outcome;
        DELETE FROM results r USING gone g WHERE r.test_id = g.id AND NOT r.outcome;
        DELETE FROM test_health h USING gone g WHERE h.test_id = g.id;
        RETURN NULL;
      END $$`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE OR REPLACE FUNCTION results_delete_with_test_cases() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        DELETE FROM results r USING gone g WHERE r.test_id = g.id AND r.outcome;
        DELETE FROM results r USING gone g WHERE r.test_id = g.id AND NOT r.outcome;
        RETURN NULL;
      END $$`);
    await q.query(
      `DELETE FROM test_health h WHERE NOT EXISTS (SELECT 1 FROM test_cases t WHERE t.id = h.test_id)`,
    );
    await q.query(
      `ALTER TABLE test_health ADD CONSTRAINT test_health_test_id_fkey FOREIGN KEY (test_id) REFERENCES test_cases (id) ON DELETE CASCADE`,
    );
  }
}
