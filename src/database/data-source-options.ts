import pg from 'pg';
import type { DataSourceOptions } from 'typeorm';
import { MIGRATIONS } from '../../migrations/index.js';
import { ENTITIES } from './entities.js';

// node-postgres writes a Date parameter in the process's local time, offset rounded to the minute: outside UTC,
// a date before standard time zones (local mean time, e.g. -07:52:58) was stored up to a minute off. In UTC,
// whatever TZ the process runs in.
pg.defaults.parseInputDatesAsUTC = true;

/**
 * `statementTimeoutMs` (SVC_DB_STATEMENT_TIMEOUT) is PostgreSQL's statement_timeout, sent when each of the pool's
 * connections starts: every statement gets it, so that no request, whichever path it takes, holds a connection for
 * minutes. The pool-wide default rather than a SET around each read: a read costs no extra round trip, and a read
 * added later cannot forget it. The writes that may rightly run longer (a whole report's import, deleting a run or
 * a project with their results, migrations) lift it for their own transaction or session (withoutStatementTimeout,
 * migrateUnderLock), which then ends with it. Left out (the migration CLI, tests' tools): no limit. JIT is off on
 * every connection (see `options` below).
 */
export function dataSourceOptions(
  url: string,
  poolSize = 20,
  statementTimeoutMs?: number,
): DataSourceOptions {
  return {
    type: 'postgres',
    url,
    entities: ENTITIES,
    migrations: MIGRATIONS,
    migrationsTableName: 'schema_migrations',
    synchronize: false,
    migrationsRun: false,
    // Failed statements surface as errors where they are handled (5xx are logged by the error filter).
    logging: false,
    extra: {
      max: poolSize,
      connectionTimeoutMillis: 10_000,
      idleTimeoutMillis: 30_000,
      application_name: 'tms',
      ...(statementTimeoutMs ? { statement_timeout: statementTimeoutMs } : {}),
      // No JIT: this service's statements are short, but a batch's (a 5,000-test recount, a window read back for a
      // whole failing suite) can be estimated above jit_above_cost, and PostgreSQL then spent seconds compiling
      // what runs in milliseconds (2.0 s of a purge batch's 2.1 s).
      // Random reads priced as what they are here (1.1, the usual figure for SSDs and a cache that holds the hot
      // tables), not as seeks of a spinning disk (4, the default): with 4, a batch's UPDATE … FROM unnest(…) of 650
      // tests' health was planned as a hash of every row of test_health, all projects' (14 ms for 40,000 rows,
      // growing with the installation), where 650 index probes take 7 ms whatever its size.
      // A URL's own `options` still wins.
      options: '-c jit=off -c random_page_cost=1.1',
    },
  };
}
