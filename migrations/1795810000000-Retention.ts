import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Retention (API.md, "Retention") and deletes that answer at once:
 * - runs.pinned: a pinned run is never removed by the cleanup.
 * - run_purges: the runs whose row is gone but whose results are still being deleted, in bounded batches, by the
 *   background purge (src/retention/). Deleting a run row no longer deletes its results in the same statement:
 *   the trigger that did (ResultsWritePath1764600000000) now queues the run here instead, so `DELETE FROM runs`
 *   costs one row however many results the run has, and every read by run finds nothing at once. Reads of a
 *   test's results (history, last status, flakiness) leave out the runs queued here until their results are gone.
 *   A restart resumes the queue: it is a table, not a process's memory.
 * - projects.deleting_at: a project being deleted, hidden from every read (access answers 404) while the purge
 *   removes its runs, results and test cases; its row goes last. Its key is free at once: keys are unique among
 *   the projects not being deleted (uq_projects_key_live replaces uq_projects_key).
 * - projects.tests_to_prune: set when a run's purge ends, cleared once the test cases it left without results are
 *   deleted (which waits while a writer of the project is busy); while set, or while runs of the project are queued,
 *   the tests list leaves out test cases without a result left to show.
 * - projects.tests_pruned: counts the deletions of a project's test cases left without results, so that a writer's
 *   cache of test case ids (TestCaseIdCache) forgets the project's ids when it changes.
 * - autovacuum of results: vacuumed after 2% of its rows are dead (the default 20% of a table of 100 million rows
 *   would let 20 million dead rows and their index entries pile up between vacuums), without the default cost
 *   delay's throttling being raised: the batches of the cleanup free space the next COPYs reuse.
 */
export class Retention1795810000000 implements MigrationInterface {
  name = 'Retention1795810000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE runs ADD COLUMN pinned boolean NOT NULL DEFAULT false`);
    await q.query(
      `ALTER TABLE projects ADD COLUMN deleting_at timestamptz, ADD COLUMN tests_pruned bigint NOT NULL DEFAULT 0,
         ADD COLUMN tests_to_prune boolean NOT NULL DEFAULT false`,
    );
    await q.query(`
      CREATE TABLE run_purges (
        run_id bigint PRIMARY KEY,
        project_id bigint NOT NULL,
        results bigint NOT NULL DEFAULT 0,
        queued_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX ix_run_purges_project ON run_purges (project_id, run_id)`);
    await q.query(
      `CREATE INDEX ix_projects_deleting ON projects (deleting_at) WHERE deleting_at IS NOT NULL`,
    );
    // A project being deleted frees its key at once: unique among the projects not being deleted.
    await q.query(`CREATE UNIQUE INDEX uq_projects_key_live ON projects (key) WHERE deleting_at IS NULL`);
    await q.query(`ALTER TABLE projects DROP CONSTRAINT uq_projects_key`);
    await q.query(`
      CREATE OR REPLACE FUNCTION results_delete_with_runs() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO run_purges (run_id, project_id, results)
          SELECT id, project_id, count_attempts FROM gone
          ON CONFLICT (run_id) DO NOTHING;
        RETURN NULL;
      END $$`);
    await q.query(`
      ALTER TABLE results SET (autovacuum_vacuum_scale_factor = 0.02, autovacuum_vacuum_threshold = 10000,
                               autovacuum_analyze_scale_factor = 0.02)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(
      `ALTER TABLE results RESET (autovacuum_vacuum_scale_factor, autovacuum_vacuum_threshold, autovacuum_analyze_scale_factor)`,
    );
    await q.query(`DELETE FROM results r USING run_purges p WHERE r.run_id = p.run_id`);
    await q.query(`
      CREATE OR REPLACE FUNCTION results_delete_with_runs() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        DELETE FROM results r USING gone g WHERE r.run_id = g.id;
        RETURN NULL;
      END $$`);
    await q.query(`DROP TABLE run_purges`);
    await q.query(`DELETE FROM projects WHERE deleting_at IS NOT NULL`);
    await q.query(`ALTER TABLE projects ADD CONSTRAINT uq_projects_key UNIQUE (key)`);
    await q.query(`DROP INDEX uq_projects_key_live`);
    await q.query(`DROP INDEX ix_projects_deleting`);
    await q.query(
      `ALTER TABLE projects DROP COLUMN deleting_at, DROP COLUMN tests_pruned, DROP COLUMN tests_to_prune`,
    );
    await q.query(`ALTER TABLE runs DROP COLUMN pinned`);
  }
}
