import { Module } from '@nestjs/common';
import { AccessModule } from '../access/access.module.js';
import { NotificationsModule } from '../notifications/notifications.module.js';
import { ResultsModule } from '../results/results.module.js';
import { GateController } from './gate.controller.js';
import { GateRepository } from './gate.repository.js';
import { GateService } from './gate.service.js';

/** The quality gate (API.md, "Quality gate"; DESIGN.md, "Derived state"). */
@Module({
  imports: [AccessModule, ResultsModule, NotificationsModule],
  controllers: [GateController],
  providers: [GateRepository, GateService],
  exports: [GateService],
})
export class GateModule {}
