import { Global, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { getDataSourceToken } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { AppConfig } from '../../../src/config/app-config.js';
import { dataSourceOptions } from '../../../src/database/data-source-options.js';
import { IngestQueue } from '../../../src/infra/queue/ingest-queue.js';
import { QueueModule } from '../../../src/infra/queue/queue.module.js';
import { createTestDatabase, TestDatabase } from '../../support/database.js';
import { deleteQueues, TEST_AMQP_URL, uniqueName } from './queue-fixtures.js';

const LIMIT = 30_000;

/** The module picks the adapter from the configuration and closes it with the application. */
describe('QueueModule', () => {
  let db: TestDatabase;
  let ds: DataSource;
  const queue = uniqueName('test.ingest.module');

  beforeAll(async () => {
    db = await createTestDatabase();
    ds = await new DataSource(dataSourceOptions(db.url, 2)).initialize();
  }, LIMIT);
  afterAll(async () => {
    await ds?.destroy();
    await db?.drop();
    await deleteQueues([queue, `${queue}.dead`]);
  }, LIMIT);

  async function boot(broker: AppConfig['broker']) {
    @Global()
    @Module({
      providers: [
        { provide: AppConfig, useValue: { broker } as AppConfig },
        { provide: getDataSourceToken(), useValue: ds },
      ],
      exports: [AppConfig, getDataSourceToken()],
    })
    class Fixtures {}
    const app = await Test.createTestingModule({ imports: [Fixtures, QueueModule] }).compile();
    await app.init();
    return app;
  }

  it.each([
    ['postgres', { queue: 'unused' }],
    ['rabbitmq', { amqpUrl: TEST_AMQP_URL, queue }],
  ])(
    'provides the %s adapter',
    async (kind, broker) => {
      const app = await boot(broker);
      const sut = app.get(IngestQueue);
      expect(sut.kind).toBe(kind);
      expect(await sut.isReady()).toBe(true);
      await app.close();
      if (kind === 'rabbitmq') {
        expect(await sut.isReady()).toBe(false); // closed with the application
      }
    },
    LIMIT,
  );
});
