import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A test's second run updates its test_health row HOT (no index touched), as its later runs do.
 *
 * - A test that has not run twice stores a flake rate of 0, not NULL (`flakeRate` is still read as null until it ran
 *   twice: test-health.repository.ts and runs.repository.ts read it with its run count). flake_rate is a key of
 *   ix_test_health_state, so its going from NULL to 0 at every test's second run made that update write an entry in
 *   each of the table's indexes. The list sorts such a test as a rate of 0 (no flips), where it sorted after them.
 *   The column stays nullable: during a rolling upgrade, replicas still on the code before write NULL there (a row
 *   they write is read the same way, and its second run is then not HOT), and a NOT NULL would fail their batches.
 * - fillfactor 45 (was 70): a batch's rows are updated in one transaction, whose old versions cannot be pruned before
 *   it commits, so a page must hold a second version of every row on it; a test's second run also lengthens its
 *   window by an entry. At 70, about a third of a second import's updates found room on their page. New pages only:
 *   the pages already written keep their fill until rewritten.
 */
export class TestHealthSecondRunHot1795890000000 implements MigrationInterface {
  name = 'TestHealthSecondRunHot1795890000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`UPDATE test_health SET flake_rate = 0 WHERE flake_rate IS NULL`);
    await q.query(`ALTER TABLE test_health ALTER COLUMN flake_rate SET DEFAULT 0, SET (fillfactor = 45)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE test_health ALTER COLUMN flake_rate DROP DEFAULT, SET (fillfactor = 70)`);
    await q.query(`UPDATE test_health SET flake_rate = NULL WHERE runs < 2`);
  }
}
