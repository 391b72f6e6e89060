import { createHash, randomBytes } from 'node:crypto';
import pg from 'pg';
import { DataSource } from 'typeorm';
import { dataSourceOptions } from '../../src/database/data-source-options.js';
import { migrateUnderLock } from '../../src/database/migrate.js';
import { MIGRATIONS } from '../../migrations/index.js';
import { pgUrlFor, TEST_PG_ADMIN_URL } from './services.js';

const TEMPLATE_LOCK = 7_246_901_338;

async function withAdmin<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: TEST_PG_ADMIN_URL });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/**
 * A template database migrated once per set of migrations (their code, not only their names: a migration edited
 * before release gets a fresh template); test databases are cheap clones of it.
 */
async function ensureTemplate(): Promise<string> {
  const version = createHash('sha1')
    .update(MIGRATIONS.map((m) => m.toString()).join('\n'))
    .digest('hex')
    .slice(0, 12);
  const template = `tms_tpl_${version}`;
  await withAdmin(async (admin) => {
    await admin.query('SELECT pg_advisory_lock($1)', [TEMPLATE_LOCK]);
    try {
      const { rowCount } = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [template]);
      if (rowCount) {
        return;
      }
      await admin.query(`CREATE DATABASE ${template}_wip`);
      const ds = await new DataSource(dataSourceOptions(pgUrlFor(`${template}_wip`), 2)).initialize();
      await migrateUnderLock(ds);
      await ds.destroy();
      await admin.query(`ALTER DATABASE ${template}_wip RENAME TO ${template}`);
    } finally {
      await admin.query('SELECT pg_advisory_unlock($1)', [TEMPLATE_LOCK]);
    }
  });
  return template;
}

export interface TestDatabase {
  name: string;
  url: string;
  drop(): Promise<void>;
}

/** A fresh, migrated database of its own for one test file. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const template = await ensureTemplate();
  const name = `tms_test_${randomBytes(6).toString('hex')}`;
  await withAdmin(async (admin) => {
    await admin.query('SELECT pg_advisory_lock($1)', [TEMPLATE_LOCK]);
    try {
      await admin.query(`CREATE DATABASE ${name} TEMPLATE ${template}`);
    } finally {
      await admin.query('SELECT pg_advisory_unlock($1)', [TEMPLATE_LOCK]);
    }
  });
  return {
    name,
    url: pgUrlFor(name),
    drop: () => withAdmin((admin) => admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => undefined),
  };
}
