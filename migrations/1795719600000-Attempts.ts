import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Attempts and outcomes (API.md, "Attempts: a test retried within a run"; src/results/attempts.ts): each result
 * says whether it is its test's outcome in the run (the last attempt by retry, startedAt, arrival), and the outcome
 * carries the test's number of attempts and the statuses of the others. One outcome per run and test, enforced by
 * a partial unique index, which is also how a writer learns cheaply that a test already has an attempt in the run
 * (its COPY fails on it). A run's counts become counts of outcomes, plus `passedOnRetry` and `attempts`.
 *
 * The new columns' defaults (an outcome, one attempt) are right for every test that ran once in a run, so only
 * runs with repeated tests are rewritten.
 */
export class Attempts1795719600000 implements MigrationInterface {
  name = 'Attempts1795719600000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE results ADD COLUMN outcome boolean NOT NULL DEFAULT true,
                          ADD COLUMN attempts integer NOT NULL DEFAULT 1,
                          ADD COLUMN other_statuses smallint NOT NULL DEFAULT 0`);
    await q.query(`
      ALTER TABLE runs ADD COLUMN count_passed_on_retry integer NOT NULL DEFAULT 0,
                       ADD COLUMN count_attempts integer NOT NULL DEFAULT 0`);
    await q.query(`UPDATE runs SET count_attempts = count_total`);
    await q.query(`
      CREATE TEMP TABLE repeated_attempts ON COMMIT DROP AS
      SELECT id, run_id, test_id, status,
             row_number() OVER (PARTITION BY run_id, test_id ORDER BY retry DESC, started_at DESC NULLS LAST, id DESC) AS n,
             count(*) OVER (PARTITION BY run_id, test_id) AS attempts
        FROM results
       WHERE (run_id, test_id) IN (SELECT run_id, test_id FROM results GROUP BY run_id, test_id HAVING count(*) > 1)`);
    await q.query(
      `UPDATE results r SET outcome = false FROM repeated_attempts a WHERE a.id = r.id AND a.n > 1`,
    );
    await q.query(`
      UPDATE results r SET attempts = o.attempts, other_statuses = o.other_statuses
        FROM (SELECT run_id, test_id, max(attempts)::int AS attempts,
                     bit_or(CASE status WHEN 'PASSED' THEN 1 WHEN 'FAILED' THEN 2 WHEN 'BROKEN' THEN 4 ELSE 8 END)
                       FILTER (WHERE n > 1)::smallint AS other_statuses,
                     max(id) FILTER (WHERE n = 1) AS id
                FROM repeated_attempts GROUP BY run_id, test_id) o
       WHERE r.id = o.id`);
    await q.query(`
      UPDATE runs u SET count_total = c.total, count_passed = c.passed, count_failed = c.failed,
                        count_broken = c.broken, count_skipped = c.skipped, count_passed_on_retry = c.passed_on_retry
        FROM (SELECT run_id, count(*) FILTER (WHERE outcome) AS total,
                     count(*) FILTER (WHERE outcome AND status = 'PASSED') AS passed,
                     count(*) FILTER (WHERE outcome AND status = 'FAILED') AS failed,
                     count(*) FILTER (WHERE outcome AND status = 'BROKEN') AS broken,
                     count(*) FILTER (WHERE outcome AND status = 'SKIPPED') AS skipped,
                     count(*) FILTER (WHERE outcome AND status = 'PASSED' AND other_statuses & 6 <> 0) AS passed_on_retry
                FROM results WHERE run_id IN (SELECT DISTINCT run_id FROM repeated_attempts) GROUP BY run_id) c
       WHERE u.id = c.run_id`);
    await q.query(
      `CREATE UNIQUE INDEX uq_results_run_test_outcome ON results (run_id, test_id) WHERE outcome`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX uq_results_run_test_outcome`);
    await q.query(`
      UPDATE runs u SET count_total = c.total, count_passed = c.passed, count_failed = c.failed,
                        count_broken = c.broken, count_skipped = c.skipped
        FROM (SELECT run_id, count(*) AS total, count(*) FILTER (WHERE status = 'PASSED') AS passed,
                     count(*) FILTER (WHERE status = 'FAILED') AS failed, count(*) FILTER (WHERE status = 'BROKEN') AS broken,
                     count(*) FILTER (WHERE status = 'SKIPPED') AS skipped
                FROM results WHERE run_id IN (SELECT id FROM runs WHERE count_attempts <> count_total) GROUP BY run_id) c
       WHERE u.id = c.run_id`);
    await q.query(`ALTER TABLE runs DROP COLUMN count_passed_on_retry, DROP COLUMN count_attempts`);
    await q.query(
      `ALTER TABLE results DROP COLUMN outcome, DROP COLUMN attempts, DROP COLUMN other_statuses`,
    );
  }
}
