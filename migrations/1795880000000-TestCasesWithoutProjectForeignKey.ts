import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * test_cases loses its foreign key to projects, as results and test_health lost theirs (ResultsWritePath1764600000000,
 * TestHealthWithoutForeignKey1795840000000): each test case inserted for a test the project had never seen ran an RI
 * check (a lookup of the project row FOR KEY SHARE, and the trigger event queued for it): ~9 µs of PostgreSQL time
 * of the ~70 µs that storing a new test's result cost in the bench's V1 ingest, for a check whose answer is the same
 * for all of a batch. What it guaranteed stays guaranteed:
 * - No test case of a project that is gone: the writer stores a batch only for a run whose row it updates (row-locks)
 *   in the same transaction, and a project's deletion deletes its runs first, so a writer of a deleted project fails
 *   and rolls its test cases back; the purge deletes the project's test cases, then its row, and then, in the same
 *   transaction, whatever test cases a writer committed meanwhile (an import's run, created in the import's own
 *   transaction, is only deleted, by cascade, with the project's row: RetentionRepository.deleteProjectRow).
 * - ON DELETE CASCADE's removal of the project's test cases: that same delete, after the project's row (their
 *   results and health go by test_cases' delete trigger, as with the cascade).
 */
export class TestCasesWithoutProjectForeignKey1795880000000 implements MigrationInterface {
  name = 'TestCasesWithoutProjectForeignKey1795880000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE test_cases DROP CONSTRAINT IF EXISTS test_cases_project_id_fkey`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(
      `DELETE FROM test_cases t WHERE NOT EXISTS (SELECT 1 FROM projects p WHERE p.id = t.project_id)`,
    );
    await q.query(
      `ALTER TABLE test_cases ADD CONSTRAINT test_cases_project_id_fkey FOREIGN KEY (project_id) REFERENCES projects (id) ON DELETE CASCADE`,
    );
  }
}
