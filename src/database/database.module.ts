import { Logger, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource, DataSourceOptions } from 'typeorm';
import { isDatabaseAway } from '../common/outages.js';
import { AppConfig } from '../config/app-config.js';
import { EmbeddedPostgresService } from '../infra/embedded-postgres/embedded-postgres.service.js';
import { dataSourceOptions } from './data-source-options.js';
import { migrateUnderLock } from './migrate.js';
import { instrumentPool } from './read-cancellation.js';

@Module({
  imports: [
    TypeOrmModule.forRootAsync({
      extraProviders: [EmbeddedPostgresService],
      inject: [AppConfig, EmbeddedPostgresService],
      useFactory: async (config: AppConfig, embedded: EmbeddedPostgresService) => {
        const url = config.db.url ?? (await embedded.start());
        return {
          ...dataSourceOptions(url, config.db.poolSize, config.db.statementTimeoutMs),
          // Retried (10 times, 3 s apart) only while the database is away or starting up: a database that does
          // not exist, a refused password or a failed migration will not change by waiting, so the start fails now.
          toRetry: isDatabaseAway,
        };
      },
      dataSourceFactory: async (options?: DataSourceOptions) => {
        const dataSource = await new DataSource(options!).initialize();
        instrumentPool(dataSource);
        const applied = await migrateUnderLock(dataSource);
        if (applied.length) {
          new Logger('Database').log(`Applied migrations: ${applied.join(', ')}`);
        }
        return dataSource;
      },
    }),
  ],
})
export class DatabaseModule {}
