import type { DataSource } from 'typeorm';

// Any fixed 64-bit number, the same in every replica: pg_advisory_lock serialises their migrations.
const MIGRATION_LOCK = 7_246_901_337;

/** Runs pending migrations while holding a session-level advisory lock, so replicas starting together take turns. */
export async function migrateUnderLock(dataSource: DataSource): Promise<string[]> {
  const runner = dataSource.createQueryRunner();
  await runner.connect();
  try {
    await runner.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    const done = await dataSource.runMigrations({ transaction: 'each' });
    return done.map((m) => m.name);
  } finally {
    await runner.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]).catch(() => undefined);
    await runner.release();
  }
}
