import type { EntityManager } from 'typeorm';
import { idArray } from '../database/id-array.js';
import { logHealthChanges } from './health-changes.js';

/** SQL for a status's bit (src/results/attempts.ts, STATUS_BITS). */
const bit = (column: string) =>
  `(CASE ${column} WHEN 'PASSED' THEN 1 WHEN 'FAILED' THEN 2 WHEN 'BROKEN' THEN 4 ELSE 8 END)`;

/** SQL for a text's 32-bit key (health-keys.ts, textKey): the first 4 bytes of its MD5. */
const key = (text: string) => `decode(substr(md5(${text}), 1, 8), 'hex')`;

/** No commit's key (NO_COMMIT). */
const NO_KEY = `'\\x00000000'::bytea`;

/** SQL for a commit's key (health-keys.ts, commitKey): NULL for none; never NO_KEY for one. */
const commitKey = (text: string) =>
  `(SELECT CASE WHEN k = ${NO_KEY} THEN '\\x00000001'::bytea ELSE k END FROM (SELECT ${key(text)} AS k) c)`;

/**
 * SQL for the entries of a test's window, newest first, from its outcomes (`results.outcome`): the last `limit` runs
 * still there in which it ran (SKIPPED ignored), each with its status bits, stream key and commit key as the window
 * stores them (test-health.repository.ts), and `passed`. `except`: SQL for a run left out (the run being written).
 */
export const windowEntries = (test: string, limit: string, except?: string) =>
  `SELECT r.run_id,
          ((${bit('r.status')} << 4) | ${bit('r.status')} | r.other_statuses)::smallint AS bits,
          r.status = 'PASSED' AS passed,
          ${key("coalesce(ru.stream, '')")} AS stream_key,
          coalesce(${commitKey("nullif(ru.attributes->>'commit', '')")}, ${NO_KEY}) AS commit_key
     FROM results r JOIN runs ru ON ru.id = r.run_id
    WHERE r.test_id = ${test} AND r.outcome AND r.status <> 'SKIPPED'${except ? ` AND r.run_id <> ${except}` : ''}
    ORDER BY r.run_id DESC LIMIT ${limit}`;

/** SQL for a window's bytes (test-health.repository.ts) from `windowEntries` rows `e`, aggregated. */
export const windowBytes = (e: string) =>
  `string_agg(substr(int8send(${e}.run_id), 3, 6) || set_byte('\\x00'::bytea, 0, ${e}.bits) || ${e}.stream_key
              || ${e}.commit_key, ''::bytea ORDER BY ${e}.run_id)`;

/** Which runs' results went (see DeletedResults): what a test must have had of them for its health to change. */
export interface DeletedRuns {
  runIds: readonly string[];
  /** Tests a failing result of which went. */
  failedTestIds: readonly string[];
  /** When the latest of the runs started (null: not known). */
  startedAt: Date | null;
}

/**
 * Recounts the kept health of these test cases (test_health) from the outcomes they have left, after the retention
 * purge deleted some of their results (ResultsObserver.resultsDeleted): the window (the last `flaky.window` runs in
 * which each ran), its flake rate and flakiness by the three rules, the last status and run, when it last failed, and
 * the state; a quarantine is kept as it is. The same rules as flakiness.ts, in SQL, as the TestHealth migration fills
 * the table; only the runs still there count (a deleted run's row is gone before its results are). By test case id,
 * in order, so that two writers' row locks come in one order.
 *
 * Only a test whose kept health the deleted runs are part of is recounted: one whose window holds one of them (its
 * run id among the window's; a match across two entries' bytes only costs a recount), whose last run is one, or
 * which failed in one that started no later than its last failure (last_failed_at is the start of the run it last
 * failed in). Retention deletes the oldest runs, which have left the windows of the tests that ran since: a recount of
 * each of their tests (its window and last failure read again, ~30 outcomes) cost more than the delete of its results.
 */
export async function recountHealth(
  tx: EntityManager,
  projectId: string,
  testIds: readonly string[],
  runs: DeletedRuns,
): Promise<void> {
  if (!testIds.length) {
    return;
  }
  // The tests to recount, row-locked: by the primary key, a probe a test (most of a batch's tests have nothing to
  // recount, and the recount's own plan takes longer than these probes).
  const locked: { test_id: string }[] = await tx.query(
    `SELECT h.test_id FROM unnest($2::bigint[]) AS u(id) JOIN test_health h ON h.test_id = u.id
      WHERE h.project_id = $1
        AND (h.last_run_id = ANY($3::bigint[])
             OR EXISTS (SELECT 1 FROM unnest($3::bigint[]) d(id)
                         WHERE position(substr(int8send(d.id), 3, 6) IN h.win) > 0)
             OR (h.test_id = ANY($4::bigint[]) AND ($5::timestamptz IS NULL OR h.last_failed_at <= $5::timestamptz)))
      ORDER BY h.test_id FOR UPDATE OF h`,
    [projectId, idArray(testIds), runs.runIds, idArray(runs.failedTestIds), runs.startedAt],
  );
  if (!locked.length) {
    return;
  }
  const ids = locked.map((r) => String(r.test_id));
  await tx.query(
    `WITH settings AS (
       SELECT coalesce((p.settings->'flaky'->>'window')::int, 30) AS win,
              coalesce((p.settings->'flaky'->>'minRuns')::int, 5) AS min_runs,
              coalesce((p.settings->'flaky'->>'flipRate')::float8, 0.2) AS flip_rate
         FROM projects p WHERE p.id = $1
     ),
     locked AS (SELECT unnest($2::bigint[]) AS test_id),
     entries AS (
       SELECT k.test_id, e.*, row_number() OVER (PARTITION BY k.test_id ORDER BY e.run_id DESC) AS n
         FROM locked k
        CROSS JOIN LATERAL (${windowEntries('k.test_id', '(SELECT win FROM settings)')}) e
     ),
     windows AS (
       SELECT e.*, lag(e.passed) OVER (PARTITION BY e.test_id, e.stream_key ORDER BY e.run_id) AS prev_passed FROM entries e
     ),
     judged AS (
       SELECT w.test_id,
              ${windowBytes('w')} AS bytes,
              count(*)::int AS runs,
              count(*) FILTER (WHERE w.prev_passed IS NOT NULL AND w.prev_passed <> w.passed)::int AS flips,
              bool_or(w.bits & 1 <> 0 AND w.bits & 6 <> 0) AS mixed
         FROM windows w GROUP BY w.test_id
     ),
     revisions AS (
       SELECT DISTINCT w.test_id FROM windows w WHERE w.commit_key <> ${NO_KEY}
        GROUP BY w.test_id, w.commit_key HAVING bool_or(w.bits & 1 <> 0) AND bool_or(w.bits & 6 <> 0)
     ),
     recounted AS (
       SELECT k.test_id, coalesce(j.bytes, ''::bytea) AS win, coalesce(j.runs, 0) AS runs,
              CASE WHEN j.runs >= 2 THEN j.flips::float8 / (j.runs - 1) ELSE 0 END AS flake_rate,
              coalesce(j.mixed, false)
                OR EXISTS (SELECT 1 FROM revisions v WHERE v.test_id = k.test_id)
                OR (coalesce(j.runs, 0) >= s.min_runs AND j.runs >= 2 AND j.flips::float8 / (j.runs - 1) >= s.flip_rate) AS flaky,
              l.status AS last_status, l.run_id AS last_run_id, lf.at AS last_failed_at
         FROM locked k CROSS JOIN settings s
         LEFT JOIN judged j ON j.test_id = k.test_id
         LEFT JOIN LATERAL (
           SELECT r.status, r.run_id FROM results r JOIN runs ru ON ru.id = r.run_id
            WHERE r.test_id = k.test_id AND r.outcome ORDER BY r.run_id DESC LIMIT 1) l ON true
         LEFT JOIN LATERAL (
           SELECT max(ru.started_at) AS at FROM results r JOIN runs ru ON ru.id = r.run_id
            WHERE r.test_id = k.test_id AND r.outcome AND r.status IN ('FAILED', 'BROKEN')) lf ON true
     )
     UPDATE test_health h
        SET win = c.win, runs = c.runs,
            flake_rate = c.flake_rate, flaky = c.flaky, last_status = c.last_status, last_run_id = c.last_run_id,
            last_failed_at = c.last_failed_at,
            state = CASE WHEN h.q_since IS NOT NULL AND (h.q_until IS NULL OR h.q_until > now()) THEN 'QUARANTINED'
                         WHEN c.flaky THEN 'FLAKY' WHEN c.last_status IN ('FAILED', 'BROKEN') THEN 'FAILING'
                         ELSE 'HEALTHY' END
       FROM recounted c
      WHERE h.test_id = c.test_id`,
    [projectId, ids],
  );
  // A recount may leave a test steady that was not, or not one that was (settled-tests.ts).
  await logHealthChanges(tx, projectId, ids);
}
