import { Module } from '@nestjs/common';
import { AccessModule } from '../access/access.module.js';
import { ResultsModule } from '../results/results.module.js';
import { ImportController } from './import.controller.js';
import { ImportService } from './import.service.js';

@Module({
  imports: [AccessModule, ResultsModule],
  controllers: [ImportController],
  providers: [ImportService],
})
export class ImportModule {}
