import type { EntityManager } from 'typeorm';

/**
 * The lock that keeps writers and the deletion of a project's test cases apart (two-key advisory lock: this class,
 * the project). A writer holds it shared for its transaction from before it resolves its batch's test cases until
 * its results are committed; the retention service deletes test cases left without results only while holding it
 * exclusively, and only when it gets it at once (pg_try_advisory_xact_lock), so a waiting cleanup never queues
 * writers behind it. Results have no foreign key to their test case (ResultsWritePath1764600000000): without this,
 * a writer could store results for a test case deleted between its look-up and its COPY.
 */
export const TEST_CASES_LOCK_CLASS = 0x52_45_54_4e; // 'RETN'

/** The project's half of the lock's key: projects' ids fit an int4 for a long time; beyond, ids share a key. */
export function projectLockKey(projectId: string): number {
  return Number(BigInt(projectId) % 2_147_483_647n);
}

/** Takes the writer's (shared) side of the lock and answers the project's test case pruning count after it. */
export async function lockTestCasesShared(tx: EntityManager, projectId: string): Promise<string> {
  await tx.query('SELECT pg_advisory_xact_lock_shared($1, $2)', [
    TEST_CASES_LOCK_CLASS,
    projectLockKey(projectId),
  ]);
  // A statement of its own: its snapshot is taken after the lock is held, so it sees a pruning that just committed.
  const rows: { tests_pruned: string }[] = await tx.query('SELECT tests_pruned FROM projects WHERE id = $1', [
    projectId,
  ]);
  return String(rows[0]?.tests_pruned ?? '0');
}
