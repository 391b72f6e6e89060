import type { EntityManager } from 'typeorm';
import { idArray } from '../database/id-array.js';
import { queryPrepared } from '../database/prepared.js';
import { projectLockKey } from '../results/test-case-guard.js';

/** The lock that numbers a project's test_health_changes (two-key advisory lock: this class, the project). */
const HEALTH_CHANGES_LOCK_CLASS = 0x48_4c_54_48; // 'HLTH'
/** The entries of test_health_changes kept a project (the older ones are deleted as new ones come). */
const CHANGES_KEPT = 1000;

/**
 * Logs a change of these tests' health (null: any test of the project) for the replicas' caches of settled tests
 * (settled-tests.ts), numbered after the project's last under a lock held to the commit, so that numbers follow
 * commit order. Taken after the rows it is about are locked, and late in the transaction: writers that log wait for
 * each other from here to their commit.
 */
export async function logHealthChanges(
  tx: Pick<EntityManager, 'query'>,
  projectId: string,
  testIds: readonly string[] | null,
): Promise<void> {
  await tx.query('SELECT pg_advisory_xact_lock($1, $2)', [
    HEALTH_CHANGES_LOCK_CLASS,
    projectLockKey(projectId),
  ]);
  const [{ n }]: { n: string }[] = await tx.query(
    `INSERT INTO test_health_changes (project_id, n, test_ids)
     SELECT $1, coalesce(max(n), 0) + 1, $2::bigint[] FROM test_health_changes WHERE project_id = $1
     RETURNING n::text`,
    [projectId, testIds === null ? null : idArray(testIds)],
  );
  if (BigInt(n) % 100n === 0n) {
    await tx.query('DELETE FROM test_health_changes WHERE project_id = $1 AND n <= $2::bigint - $3', [
      projectId,
      n,
      CHANGES_KEPT,
    ]);
  }
}

/**
 * The project's changes logged after change `known` (test_health_changes, see settled-tests.ts), in order, and the
 * last change's number; without `known`, only that number. One probe of the primary key.
 */
export async function healthChangesSince(
  tx: Pick<EntityManager, 'query'>,
  projectId: string,
  known: string | undefined,
): Promise<{ top: string; changes: { n: string; testIds: string[] | null }[] }> {
  if (known === undefined) {
    const [{ top }] = await queryPrepared<{ top: string }>(
      tx,
      'test-health-changes-top',
      'SELECT coalesce(max(n), 0)::text AS top FROM test_health_changes WHERE project_id = $1',
      [projectId],
    );
    return { top, changes: [] };
  }
  const rows = await queryPrepared<{ n: string; test_ids: string[] | null }>(
    tx,
    'test-health-changes-since',
    'SELECT n::text, test_ids FROM test_health_changes WHERE project_id = $1 AND n > $2 ORDER BY n',
    [projectId, known],
  );
  return {
    top: rows.length ? rows[rows.length - 1].n : known,
    changes: rows.map((r) => ({ n: r.n, testIds: r.test_ids?.map(String) ?? null })),
  };
}
