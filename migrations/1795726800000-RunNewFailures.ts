import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * runs.count_new_failures: a run's tests NEW_FAILURE against the run before in its stream (the run shape's
 * `newFailures`), stored as the run finishes (src/insights/changes.ts) so that a list of runs reads it rather than
 * comparing each run with the one before. Existing runs keep null: computing them here would read every result of
 * every run at boot.
 */
export class RunNewFailures1795726800000 implements MigrationInterface {
  name = 'RunNewFailures1795726800000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE runs ADD COLUMN count_new_failures integer`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE runs DROP COLUMN count_new_failures`);
  }
}
