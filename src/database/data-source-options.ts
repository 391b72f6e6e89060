import type { DataSourceOptions } from 'typeorm';
import { MIGRATIONS } from '../../migrations/index.js';
import { ENTITIES } from './entities.js';

export function dataSourceOptions(url: string, poolSize = 20): DataSourceOptions {
  return {
    type: 'postgres',
    url,
    entities: ENTITIES,
    migrations: MIGRATIONS,
    migrationsTableName: 'schema_migrations',
    synchronize: false,
    migrationsRun: false,
    logging: ['error'],
    extra: {
      max: poolSize,
      connectionTimeoutMillis: 10_000,
      idleTimeoutMillis: 30_000,
      application_name: 'tms',
    },
  };
}
