import { type DataSource, MigrationExecutor } from 'typeorm';
import { requireExtensions } from './extensions.js';

// Any fixed 64-bit number, the same in every replica: pg_advisory_lock serialises their migrations.
const MIGRATION_LOCK = 7_246_901_337;

/**
 * Runs pending migrations while holding a session-level advisory lock, so replicas starting together take turns.
 * Lock and migrations share one connection, whose statement timeout (SVC_DB_STATEMENT_TIMEOUT) is lifted for the
 * while: a replica waits as long as another's migrations take, and a migration rewriting a large table may take
 * longer than any read should. RESET gives the connection back to the pool with the timeout it started with.
 */
export async function migrateUnderLock(dataSource: DataSource): Promise<string[]> {
  const runner = dataSource.createQueryRunner();
  await runner.connect();
  try {
    await requireExtensions((sql) => runner.query(sql));
    await runner.query('SET statement_timeout = 0');
    await runner.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    const executor = new MigrationExecutor(dataSource, runner);
    executor.transaction = 'each';
    const done = await executor.executePendingMigrations();
    return done.map((m) => m.name);
  } finally {
    await runner.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]).catch(() => undefined);
    await runner.query('RESET statement_timeout').catch(() => undefined);
    await runner.release();
  }
}
