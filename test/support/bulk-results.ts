import type { DataSource } from 'typeorm';

/**
 * Stores `count` passing results in a run directly, each of a test case of its own (suite S, names bulk1 …), and adds
 * them to the run's counts: setup for tests of what happens to big runs (deleting, purging), not of the write path.
 * Identities are md5(`identitySeed` || i). No statement timeout: a loaded machine took over 30 s for 200,000.
 */
export async function addBulkResults(
  db: DataSource,
  to: { projectId: number; runId: number; count: number; identitySeed: string },
): Promise<void> {
  await db.transaction(async (tx) => {
    await tx.query('SET LOCAL statement_timeout = 0');
    await tx.query(
      `INSERT INTO test_cases (project_id, identity, suite, name)
         SELECT $1, md5($3 || i)::uuid, 'S', 'bulk' || i FROM generate_series(1, $2::int) i`,
      [to.projectId, to.count, to.identitySeed],
    );
    await tx.query(
      `INSERT INTO results (run_id, project_id, test_id, name, suite, status)
         SELECT $1, $2, t.id, t.name, 'S', 'PASSED' FROM test_cases t WHERE t.project_id = $2 AND t.name LIKE 'bulk%'`,
      [to.runId, to.projectId],
    );
    await tx.query(
      `UPDATE runs SET count_total = count_total + $2, count_passed = count_passed + $2, count_attempts = count_attempts + $2
        WHERE id = $1`,
      [to.runId, to.count],
    );
  });
}
