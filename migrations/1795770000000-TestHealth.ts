import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * test_health: a test case's health (API.md, "Test health"), one row a test case, kept by the results writer's
 * observer (src/stability/) inside each batch's transaction, so that lists and sorts read columns, never history.
 *
 * - win: the test's window, oldest first, one entry a run in which it ran (an outcome other than SKIPPED), 15 bytes
 *   an entry, big-endian: the run id (6 bytes); its outcome's status bit shifted left by 4 ORed with the bits of every
 *   attempt (1 byte, src/results/attempts.ts, STATUS_BITS); a 32-bit key of the run's stream and one of its `commit`
 *   attribute (4 bytes each; 0: none). The keys are the first 4 bytes of the MD5 of the text
 *   (src/stability/health-keys.ts), the same here and there. One short value rather than an array per field: the
 *   writer reads and rewrites every window of a batch, and a bytea is parsed with a plain loop where arrays of
 *   bigints are parsed as text, element by element (most of what the writer spent), and the row stays small.
 * - runs, flake_rate, flaky, last_status, last_run_id, first_seen_at, last_failed_at, state: what the rules made of
 *   it (src/stability/flakiness.ts), and the quarantine (q_*), its consecutive passing runs (q_passes, q_pass_run)
 *   and the run of its last release (released_run).
 *
 * A narrow row updated on every run of its test: fillfactor 70 leaves room on its page for the new version, so that
 * the update is HOT (no index touched) while the indexed columns (state, flake_rate, last_failed_at) stay put.
 *
 * Existing test cases are filled from their outcomes here, with each project's flaky settings, in SQL that follows
 * the rules of flakiness.ts (change both, or neither).
 */
export class TestHealth1795770000000 implements MigrationInterface {
  name = 'TestHealth1795770000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE test_health (
        test_id bigint PRIMARY KEY REFERENCES test_cases (id) ON DELETE CASCADE,
        project_id bigint NOT NULL,
        win bytea NOT NULL DEFAULT '',
        runs integer NOT NULL DEFAULT 0,
        flake_rate double precision,
        flaky boolean NOT NULL DEFAULT false,
        last_status varchar(16),
        last_run_id bigint,
        first_seen_at timestamptz NOT NULL DEFAULT now(),
        last_failed_at timestamptz,
        state varchar(16) NOT NULL DEFAULT 'HEALTHY',
        q_since timestamptz,
        q_reason varchar(1000),
        q_auto boolean,
        q_by_user_id bigint,
        q_until timestamptz,
        q_passes integer NOT NULL DEFAULT 0,
        q_pass_run bigint,
        released_run bigint
      ) WITH (fillfactor = 70)`);
    // The tests page: a state's tests by flake rate (the order CI and people read flaky tests in), and the sorts.
    await q.query(
      `CREATE INDEX ix_test_health_state ON test_health (project_id, state, flake_rate DESC NULLS LAST, test_id)`,
    );
    await q.query(
      `CREATE INDEX ix_test_health_last_failed ON test_health (project_id, last_failed_at DESC NULLS LAST, test_id)`,
    );
    await q.query(
      `CREATE INDEX ix_test_health_first_seen ON test_health (project_id, first_seen_at, test_id)`,
    );
    // Quarantines whose `until` passed, for the sweep that ends them durably.
    await q.query(`CREATE INDEX ix_test_health_until ON test_health (q_until) WHERE q_until IS NOT NULL`);

    await q.query(`
      WITH settings AS (
        SELECT p.id AS project_id,
               coalesce((p.settings->'flaky'->>'window')::int, 30) AS win,
               coalesce((p.settings->'flaky'->>'minRuns')::int, 5) AS min_runs,
               coalesce((p.settings->'flaky'->>'flipRate')::float8, 0.2) AS flip_rate
          FROM projects p
      ),
      entries AS (
        SELECT t.id AS test_id, e.*, row_number() OVER (PARTITION BY t.id ORDER BY e.run_id DESC) AS n, s.win
          FROM test_cases t JOIN settings s ON s.project_id = t.project_id
         CROSS JOIN LATERAL (
           SELECT r.run_id,
                  ((${bit('r.status')} << 4) | ${bit('r.status')} | r.other_statuses)::smallint AS bits,
                  r.status = 'PASSED' AS passed,
                  ${key("coalesce(ru.stream, '')")} AS stream_key,
                  coalesce(${commitKey("nullif(ru.attributes->>'commit', '')")}, ${NO_KEY}) AS commit_key
             FROM results r JOIN runs ru ON ru.id = r.run_id
            WHERE r.test_id = t.id AND r.outcome AND r.status <> 'SKIPPED'
            ORDER BY r.run_id DESC LIMIT 500) e
      ),
      windows AS (
        SELECT e.*, lag(e.passed) OVER (PARTITION BY e.test_id, e.stream_key ORDER BY e.run_id) AS prev_passed
          FROM entries e WHERE e.n <= e.win
      ),
      judged AS (
        SELECT w.test_id,
               string_agg(substr(int8send(w.run_id), 3, 6) || set_byte('\\x00'::bytea, 0, w.bits) || w.stream_key
                          || w.commit_key, ''::bytea ORDER BY w.run_id) AS bytes,
               count(*)::int AS runs,
               count(*) FILTER (WHERE w.prev_passed IS NOT NULL AND w.prev_passed <> w.passed)::int AS flips,
               bool_or(w.bits & 1 <> 0 AND w.bits & 6 <> 0) AS mixed
          FROM windows w
         GROUP BY w.test_id
      ),
      revisions AS (
        SELECT w.test_id, bool_or(true) AS both
          FROM windows w
         WHERE w.commit_key <> ${NO_KEY}
         GROUP BY w.test_id, w.commit_key
        HAVING bool_or(w.bits & 1 <> 0) AND bool_or(w.bits & 6 <> 0)
      )
      INSERT INTO test_health (test_id, project_id, win, runs, flake_rate, flaky, last_status, last_run_id,
                               first_seen_at, last_failed_at, state)
      SELECT t.id, t.project_id, coalesce(j.bytes, ''), coalesce(j.runs, 0),
             CASE WHEN j.runs >= 2 THEN j.flips::float8 / (j.runs - 1) END,
             f.flaky, l.status, l.run_id, t.created_at, lf.at,
             CASE WHEN f.flaky THEN 'FLAKY' WHEN l.status IN ('FAILED', 'BROKEN') THEN 'FAILING' ELSE 'HEALTHY' END
        FROM test_cases t JOIN settings s ON s.project_id = t.project_id
        LEFT JOIN judged j ON j.test_id = t.id
        CROSS JOIN LATERAL (
          SELECT coalesce(j.mixed, false)
                 OR EXISTS (SELECT 1 FROM revisions v WHERE v.test_id = t.id)
                 OR (coalesce(j.runs, 0) >= s.min_runs AND j.runs >= 2 AND j.flips::float8 / (j.runs - 1) >= s.flip_rate)
                 AS flaky) f
        LEFT JOIN LATERAL (SELECT status, run_id FROM results WHERE test_id = t.id AND outcome ORDER BY run_id DESC LIMIT 1) l ON true
        LEFT JOIN LATERAL (
          SELECT max(ru.started_at) AS at FROM results r JOIN runs ru ON ru.id = r.run_id
           WHERE r.test_id = t.id AND r.outcome AND r.status IN ('FAILED', 'BROKEN')) lf ON true`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE test_health`);
  }
}

/** SQL for a status's bit (src/results/attempts.ts, STATUS_BITS). */
function bit(column: string): string {
  return `(CASE ${column} WHEN 'PASSED' THEN 1 WHEN 'FAILED' THEN 2 WHEN 'BROKEN' THEN 4 ELSE 8 END)`;
}

/** SQL for a text's 32-bit key (src/stability/health-keys.ts, textKey): the first 4 bytes of its MD5. */
function key(text: string): string {
  return `decode(substr(md5(${text}), 1, 8), 'hex')`;
}

/** No commit's key (NO_COMMIT). */
const NO_KEY = `'\\x00000000'::bytea`;

/** SQL for a commit's key (health-keys.ts, commitKey): NULL for none; never NO_KEY for one. */
function commitKey(text: string): string {
  return `(SELECT CASE WHEN k = ${NO_KEY} THEN '\\x00000001'::bytea ELSE k END FROM (SELECT ${key(text)} AS k) c)`;
}
