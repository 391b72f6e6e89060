import { Module } from '@nestjs/common';
import { AccessModule } from '../access/access.module.js';
import { ResultsModule } from '../results/results.module.js';
import { InsightsController } from './insights.controller.js';
import { InsightsRepository } from './insights.repository.js';
import { InsightsService } from './insights.service.js';

@Module({
  imports: [AccessModule, ResultsModule],
  controllers: [InsightsController],
  providers: [InsightsRepository, InsightsService],
})
export class InsightsModule {}
