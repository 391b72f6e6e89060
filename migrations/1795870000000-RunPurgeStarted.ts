import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * run_purges keeps when the deleted run started: a purge batch recounts a test's health only where the run's
 * results counted in it (health-recount.ts), and whether the run held the test's last failure is told by that time
 * (test_health.last_failed_at is the start of the run of the last failure). Rows queued before have none: their
 * batches recount every failing test they delete, as all batches did.
 */
export class RunPurgeStarted1795870000000 implements MigrationInterface {
  name = 'RunPurgeStarted1795870000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE run_purges ADD COLUMN started_at timestamptz`);
    await q.query(`
      CREATE OR REPLACE FUNCTION results_delete_with_runs() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO run_purges (run_id, project_id, results, started_at)
          SELECT id, project_id, count_attempts, started_at FROM gone
          ON CONFLICT (run_id) DO NOTHING;
        RETURN NULL;
      END $$`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE OR REPLACE FUNCTION results_delete_with_runs() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO run_purges (run_id, project_id, results)
          SELECT id, project_id, count_attempts FROM gone
          ON CONFLICT (run_id) DO NOTHING;
        RETURN NULL;
      END $$`);
    await q.query(`ALTER TABLE run_purges DROP COLUMN started_at`);
  }
}
