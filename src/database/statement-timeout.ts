import type { EntityManager } from 'typeorm';

/**
 * Lifts the pool's statement timeout (SVC_DB_STATEMENT_TIMEOUT, see dataSourceOptions) for the rest of the
 * transaction `tx`: for the writes that may rightly run longer than any read should (a 256 MiB report's import
 * COPYing its batches, deleting a run or a project with all their results). SET LOCAL ends with the transaction,
 * so the connection goes back to the pool with the timeout in force.
 */
export async function withoutStatementTimeout(tx: EntityManager): Promise<void> {
  await tx.query('SET LOCAL statement_timeout = 0');
}
