import { Logger, Module, OnApplicationBootstrap } from '@nestjs/common';
import { AccessModule } from '../access/access.module.js';
import { Metrics } from '../health/metrics.js';
import { IngestQueue } from '../infra/queue/ingest-queue.js';
import { ResultsModule } from '../results/results.module.js';
import { IngestV2Controller } from './ingest-v2.controller.js';
import { IngestV2Processor } from './ingest-v2.processor.js';
import { IngestV2Repository } from './ingest-v2.repository.js';
import { IngestV2Service } from './ingest-v2.service.js';

// Up to 10 messages (10,000 results at the clients' usual 1000) in one transaction, three such batches at once:
// while the database stores two, this process parses and prepares the next. Against 50 × 2 this keeps both cores
// busy to the end of a burst instead of leaving one batch of 50 to a single backend (V2 burst in the ingest
// bench, one run each side by side: 67-82k against 57-58k results/s); 20 × 3 and 10 × 4 were no better.
const BATCH_SIZE = 10;
const MAX_ATTEMPTS = 5;
const CONCURRENCY = 3;

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
    this.metrics.gaugeFrom(
      'tms_ingest_dead_lettered_messages',
      'V2 messages this replica moved to the dead-letter queue since it started',
      () => this.queue.deadLettered(),
    );
    this.metrics.gaugeFrom('tms_ingest_queue_depth', 'V2 messages waiting in the ingest queue', () => this.queue.depth());
    await this.queue.consume((batch) => this.processor.handle(batch), {
      batchSize: BATCH_SIZE,
      maxAttempts: MAX_ATTEMPTS,
      concurrency: CONCURRENCY,
    });
    new Logger('IngestV2').log(`Consuming the ${this.queue.kind} ingest queue`);
  }
}
