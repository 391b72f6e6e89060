import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The unique index of test cases' identities leads with the identity: (identity, project_id) instead of (project_id,
 * identity). The writer looks a batch's tests up one identity at a time (results.writer.ts, testCaseIds); with the
 * project first, the planner saw two equally cheap indexes whenever it thought the project had about one test case
 * (a table never analysed, or a project newer than the table's statistics: a first run, a first import) and took
 * ix_test_cases_project_order, which answers the project only, so each identity was looked for among all of the
 * project's test cases: 1000 lookups in a project of 3,000 tests took 750 ms instead of 2, growing with the project
 * until the next ANALYZE. With the identity first, the lookup names only the identity to the index (the project is
 * checked on the row it finds), which no other index can answer. ON CONFLICT (project_id, identity) infers either.
 */
export class TestCaseIdentityFirst1795850000000 implements MigrationInterface {
  name = 'TestCaseIdentityFirst1795850000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE UNIQUE INDEX uq_test_cases_identity_first ON test_cases (identity, project_id)`);
    await q.query(`ALTER TABLE test_cases DROP CONSTRAINT uq_test_cases_identity`);
    await q.query(
      `ALTER TABLE test_cases ADD CONSTRAINT uq_test_cases_identity UNIQUE USING INDEX uq_test_cases_identity_first`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`CREATE UNIQUE INDEX uq_test_cases_identity_project ON test_cases (project_id, identity)`);
    await q.query(`ALTER TABLE test_cases DROP CONSTRAINT uq_test_cases_identity`);
    await q.query(
      `ALTER TABLE test_cases ADD CONSTRAINT uq_test_cases_identity UNIQUE USING INDEX uq_test_cases_identity_project`,
    );
  }
}
