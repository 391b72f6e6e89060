import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * test_health_changes: a log, per project, of the tests whose health row changed in a way that a replica's cache of
 * settled tests must hear of (src/stability/settled-tests.ts): numbered 1, 2, … in commit order (a writer numbers
 * its entry under a lock on the project held to its commit), `test_ids` NULL for "any test of the project". A writer
 * reads the entries after the last number it knows, one index probe a batch, and forgets those tests. The oldest
 * entries are deleted as new ones come (a replica that falls that far behind forgets the whole project).
 */
export class TestHealthChanges1795900000000 implements MigrationInterface {
  name = 'TestHealthChanges1795900000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE test_health_changes (
        project_id bigint NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        n bigint NOT NULL,
        test_ids bigint[],
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (project_id, n)
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS test_health_changes`);
  }
}
