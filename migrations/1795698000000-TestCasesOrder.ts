import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The project's tests in their list order, the id last: a page of GET /api/projects/{id}/tests (suite, name, then
 * id to break ties) is an index-only scan of it, read from the previous page's last key (its cursor) or counted off
 * (an OFFSET) without a sort. It replaces (project_id, suite, name), whose uses it serves as well.
 */
export class TestCasesOrder1795698000000 implements MigrationInterface {
  name = 'TestCasesOrder1795698000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX ix_test_cases_project_order ON test_cases (project_id, suite, name, id)`);
    await q.query(`DROP INDEX ix_test_cases_project_name`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX ix_test_cases_project_name ON test_cases (project_id, suite, name)`);
    await q.query(`DROP INDEX ix_test_cases_project_order`);
  }
}
