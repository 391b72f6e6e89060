import { Module, OnModuleInit } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AccessModule } from '../access/access.module.js';
import { ProjectLocator } from '../access/project-locator.js';
import { ResultEntity, RunEntity, TestCaseEntity } from './entities.js';
import { ResultFailures } from './result-failures.js';
import { ResultsObservers } from './results-observers.js';
import { ResultsService } from './results.service.js';
import { ResultsWriter } from './results.writer.js';
import { RunsRepository } from './runs.repository.js';

@Module({
  imports: [AccessModule, TypeOrmModule.forFeature([RunEntity, ResultEntity, TestCaseEntity])],
  providers: [RunsRepository, ResultsObservers, ResultFailures, ResultsWriter, ResultsService],
  exports: [RunsRepository, ResultsObservers, ResultFailures, ResultsWriter, ResultsService],
})
export class ResultsModule implements OnModuleInit {
  constructor(
    private readonly locator: ProjectLocator,
    private readonly runs: RunsRepository,
  ) {}

  onModuleInit(): void {
    this.locator.register('runId', 'Run', (id) => this.runs.projectOfRun(id));
  }
}
