import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * test_health's index for the tests list sorted by last failure holds the day of it (UTC), not the instant. A test
 * that fails moves its last_failed_at on every run it fails in: with the instant indexed, each such update changed
 * an indexed column, so it was never HOT and added an entry to each of the table's indexes, for every failing test
 * of every run: about half of what the results writer spent on test health (an UPDATE of 2,000 failing tests: 67 ms
 * with that index, 42 ms with this one, all HOT). The day changes on a test's first failure of a day only; its
 * other indexed columns (state, flake_rate, first_seen_at) stay as they were while it keeps failing.
 * The list sorts by the day, then the instant (the same order: the day grows with the instant): PostgreSQL reads the
 * index a day at a time and sorts within it (an incremental sort), where without an index it read and sorted the
 * project's every row (80 ms for 50,000 tests; bench section test-health prints it).
 */
export class TestHealthLastFailedByDay1795860000000 implements MigrationInterface {
  name = 'TestHealthLastFailedByDay1795860000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX IF EXISTS ix_test_health_last_failed`);
    await q.query(
      `ALTER TABLE test_health
         ADD COLUMN last_failed_day date GENERATED ALWAYS AS ((last_failed_at AT TIME ZONE 'UTC')::date) STORED`,
    );
    await q.query(
      `CREATE INDEX ix_test_health_last_failed_day ON test_health (project_id, last_failed_day DESC NULLS LAST, test_id)`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX IF EXISTS ix_test_health_last_failed_day`);
    await q.query(`ALTER TABLE test_health DROP COLUMN IF EXISTS last_failed_day`);
    await q.query(
      `CREATE INDEX ix_test_health_last_failed ON test_health (project_id, last_failed_at DESC NULLS LAST, test_id)`,
    );
  }
}
