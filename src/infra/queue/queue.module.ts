import { BeforeApplicationShutdown, Global, Inject, Module } from '@nestjs/common';
import { getDataSourceToken } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { AppConfig } from '../../config/app-config.js';
import { IngestQueue } from './ingest-queue.js';
import { PostgresIngestQueue } from './postgres-ingest.queue.js';
import { RabbitMqIngestQueue } from './rabbitmq-ingest.queue.js';

/**
 * RabbitMQ when SVC_BROKER_AMQP_URL is set, otherwise the PostgreSQL table. A broker that is down at boot
 * does not stop the service: the first attempt is awaited (bounded by the connect timeout), then the queue
 * keeps reconnecting in the background and V2 writes answer 503 until it is back.
 */
export async function createIngestQueue(config: AppConfig, dataSource: DataSource): Promise<IngestQueue> {
  if (!config.broker.amqpUrl) {
    return new PostgresIngestQueue(dataSource);
  }
  const queue = new RabbitMqIngestQueue({ url: config.broker.amqpUrl, queue: config.broker.queue });
  await queue.start();
  return queue;
}

@Global()
@Module({
  providers: [
    { provide: IngestQueue, inject: [AppConfig, getDataSourceToken()], useFactory: createIngestQueue },
  ],
  exports: [IngestQueue],
})
export class QueueModule implements BeforeApplicationShutdown {
  constructor(@Inject(IngestQueue) private readonly queue: IngestQueue) {}

  /**
   * Before, not on, shutdown: the batch in hand still needs the database, whose DataSource TypeORM destroys
   * in its own onApplicationShutdown.
   */
  async beforeApplicationShutdown(): Promise<void> {
    await this.queue.close();
  }
}
