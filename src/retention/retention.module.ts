import { Module } from '@nestjs/common';
import { AccessModule } from '../access/access.module.js';
import { ResultsModule } from '../results/results.module.js';
import { RetentionController } from './retention.controller.js';
import { RetentionRepository } from './retention.repository.js';
import { RetentionScheduler } from './retention.scheduler.js';
import { RetentionService } from './retention.service.js';

/** Retention (API.md, "Retention") and the purge behind deletes of runs and projects. */
@Module({
  imports: [AccessModule, ResultsModule],
  controllers: [RetentionController],
  providers: [RetentionRepository, RetentionService, RetentionScheduler],
})
export class RetentionModule {}
