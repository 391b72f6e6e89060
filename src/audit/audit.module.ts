import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { UsersModule } from '../users/users.module.js';
import { AuditEventEntity } from './audit-event.entity.js';
import { AuditController } from './audit.controller.js';
import { AuditRepository } from './audit.repository.js';
import { AuditService } from './audit.service.js';

@Module({
  imports: [TypeOrmModule.forFeature([AuditEventEntity]), UsersModule],
  controllers: [AuditController],
  providers: [AuditRepository, AuditService],
})
export class AuditModule {}
