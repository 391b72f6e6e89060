import pg from 'pg';
import type { DataSourceOptions } from 'typeorm';
import { MIGRATIONS } from '../../migrations/index.js';
import { ENTITIES } from './entities.js';

// node-postgres writes a Date parameter in the process's local time, offset rounded to the minute: outside UTC,
// a date before standard time zones (local mean time, e.g. -07:52:58) was stored up to a minute off. In UTC,
// whatever TZ the process runs in.
pg.defaults.parseInputDatesAsUTC = true;

export function dataSourceOptions(url: string, poolSize = 20): DataSourceOptions {
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
    },
  };
}
