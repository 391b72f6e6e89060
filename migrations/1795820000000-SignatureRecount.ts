import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Failure signatures recounted when results are deleted (src/triage/signatures-recount.ts; API.md, "Retention":
 * "signatures left without results go too; counts are kept right"):
 * - failure_results loses its foreign key to runs. Its rows went with their run's row, in the same statement
 *   (DELETE /api/runs/{id}, the retention cleanup: one short statement meant to cost one row), before the purge
 *   could read which signatures and tests the run's failing results had. They now go with their results, in the purge's
 *   batches (RetentionRepository.deleteResultsBatch), which hand the observers what they held so the signatures' counts
 *   are decremented in the same transaction; a project being deleted has them purged the same way.
 * - failure_signature_runs.started_at: its run's start, kept on the link row (a run's start never changes), and an
 *   index by signature and start: a signature that lost its first or last run finds the next one by two index probes,
 *   not by reading every run it appeared in. The writer fills it (signatures.writer.ts); FailureSignatures creates the
 *   column too, as its backfill runs that writer.
 * - The signatures that runs deleted before this change left behind are repaired: their link rows of runs gone
 *   (nothing removed them), their tests' counts (from the failure_results left, by their results), their occurrences,
 *   tests, runs, first and last seen; those with no run left are deleted, the suggestions they made let go of them.
 */
export class SignatureRecount1795820000000 implements MigrationInterface {
  name = 'SignatureRecount1795820000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE failure_results DROP CONSTRAINT failure_results_run_id_fkey`);
    await q.query(`ALTER TABLE failure_signature_runs ADD COLUMN IF NOT EXISTS started_at timestamptz`);
    await q.query(
      `UPDATE failure_signature_runs l SET started_at = r.started_at
         FROM runs r WHERE r.id = l.run_id AND l.started_at IS NULL`,
    );
    await repair(q);
    await q.query(`ALTER TABLE failure_signature_runs ALTER COLUMN started_at SET NOT NULL`);
    await q.query(
      `CREATE INDEX ix_failure_signature_runs_seen ON failure_signature_runs (signature_id, started_at, run_id)`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX ix_failure_signature_runs_seen`);
    await q.query(`ALTER TABLE failure_signature_runs DROP COLUMN started_at`);
    // The rows of runs whose purge is under way go now, as they did with their run.
    await q.query(
      `DELETE FROM failure_results f WHERE NOT EXISTS (SELECT 1 FROM runs r WHERE r.id = f.run_id)`,
    );
    await q.query(
      `ALTER TABLE failure_results ADD CONSTRAINT failure_results_run_id_fkey
         FOREIGN KEY (run_id) REFERENCES runs (id) ON DELETE CASCADE`,
    );
  }
}

/** The signatures with link rows of runs that are gone (started_at left NULL above), recounted from what is left. */
async function repair(q: QueryRunner): Promise<void> {
  await q.query(
    `CREATE TEMPORARY TABLE stale_signatures ON COMMIT DROP AS
       SELECT DISTINCT signature_id AS id FROM failure_signature_runs WHERE started_at IS NULL`,
  );
  await q.query(`DELETE FROM failure_signature_runs WHERE started_at IS NULL`);
  // Their tests' link rows, from their failing results left (those of runs gone went with their runs), each found by
  // its run's index (run_id, status, id).
  await q.query(
    `DELETE FROM failure_signature_tests WHERE signature_id IN (SELECT id FROM stale_signatures)`,
  );
  await q.query(
    `INSERT INTO failure_signature_tests (signature_id, test_id, occurrences)
     SELECT f.signature_id, r.test_id, count(*)
       FROM failure_results f
       JOIN results r ON r.run_id = f.run_id AND r.status IN ('FAILED', 'BROKEN') AND r.id = f.result_id
      WHERE f.signature_id IN (SELECT id FROM stale_signatures)
      GROUP BY f.signature_id, r.test_id`,
  );
  await q.query(
    `UPDATE failure_signatures s
        SET occurrences = c.occurrences, runs = c.runs,
            tests = (SELECT count(*) FROM failure_signature_tests t WHERE t.signature_id = s.id),
            first_run_id = f.run_id, first_seen_at = f.started_at, last_run_id = l.run_id, last_seen_at = l.started_at
       FROM stale_signatures x
      CROSS JOIN LATERAL (
        SELECT coalesce(sum(occurrences), 0) AS occurrences, count(*) AS runs
          FROM failure_signature_runs WHERE signature_id = x.id) c
      CROSS JOIN LATERAL (
        SELECT run_id, started_at FROM failure_signature_runs WHERE signature_id = x.id
         ORDER BY started_at, run_id LIMIT 1) f
      CROSS JOIN LATERAL (
        SELECT run_id, started_at FROM failure_signature_runs WHERE signature_id = x.id
         ORDER BY started_at DESC, run_id DESC LIMIT 1) l
      WHERE s.id = x.id`,
  );
  // Those with no run left: what they suggested stays (triage and issue) as no suggestion any more, and they go.
  await q.query(
    `CREATE TEMPORARY TABLE empty_signatures ON COMMIT DROP AS
       SELECT x.id FROM stale_signatures x
        WHERE NOT EXISTS (SELECT 1 FROM failure_signature_runs l WHERE l.signature_id = x.id)`,
  );
  await q.query(
    `UPDATE failure_signatures SET suggested_from_id = NULL, suggested_similarity = NULL
      WHERE suggested_from_id IN (SELECT id FROM empty_signatures)`,
  );
  await q.query(`DELETE FROM failure_signatures WHERE id IN (SELECT id FROM empty_signatures)`);
}
