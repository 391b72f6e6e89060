import { Module } from '@nestjs/common';
import { AccessModule } from '../access/access.module.js';
import { ResultsModule } from '../results/results.module.js';
import { ImportController } from './import.controller.js';
import { ImportSlots } from './import-slots.js';
import { ImportService } from './import.service.js';

@Module({
  imports: [AccessModule, ResultsModule],
  controllers: [ImportController],
  providers: [ImportService, ImportSlots],
})
export class ImportModule {}
