import { Module } from '@nestjs/common';
import { AccessModule } from '../access/access.module.js';
import { SettingsController } from './settings.controller.js';
import { SettingsRepository } from './settings.repository.js';
import { SettingsService } from './settings.service.js';

/** A project's policies (API.md, "Project settings"). */
@Module({
  imports: [AccessModule],
  controllers: [SettingsController],
  providers: [SettingsRepository, SettingsService],
})
export class SettingsModule {}
