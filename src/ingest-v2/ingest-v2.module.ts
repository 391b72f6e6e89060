import { Logger, Module, OnApplicationBootstrap } from '@nestjs/common';
import { AccessModule } from '../access/access.module.js';
import { Metrics } from '../health/metrics.js';
import { IngestQueue } from '../infra/queue/ingest-queue.js';
import { ResultsModule } from '../results/results.module.js';
import { IngestV2Controller } from './ingest-v2.controller.js';
import { IngestV2Processor } from './ingest-v2.processor.js';
import { IngestV2Repository } from './ingest-v2.repository.js';
import { IngestV2Service } from './ingest-v2.service.js';

const BATCH_SIZE = 50;
const MAX_ATTEMPTS = 5;
// Two batches at once: while the database stores one, this process parses and prepares the next.
const CONCURRENCY = 2;

@Module({
  imports: [AccessModule, ResultsModule],
  controllers: [IngestV2Controller],
  providers: [IngestV2Repository, IngestV2Service, IngestV2Processor],
})
export class IngestV2Module implements OnApplicationBootstrap {
  constructor(
    private readonly queue: IngestQueue,
    private readonly processor: IngestV2Processor,
    private readonly metrics: Metrics,
  ) {}

  /** Every replica consumes: consumers compete for the queue's messages. */
  async onApplicationBootstrap(): Promise<void> {
    this.metrics.countFrom(
      'tms_ingest_dead_lettered_messages',
      'V2 messages this replica moved to the dead-letter queue since it started',
      () => this.queue.deadLettered(),
    );
    await this.queue.consume((batch) => this.processor.handle(batch), {
      batchSize: BATCH_SIZE,
      maxAttempts: MAX_ATTEMPTS,
      concurrency: CONCURRENCY,
    });
    new Logger('IngestV2').log(`Consuming the ${this.queue.kind} ingest queue`);
  }
}
