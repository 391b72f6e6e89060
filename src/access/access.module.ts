import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { UsersModule } from '../users/users.module.js';
import {
  GroupBindingEntity,
  GroupEntity,
  GroupMemberEntity,
  InvitationEntity,
  ProjectEntity,
  ProjectMemberEntity,
} from './entities.js';
import { InvitationsController } from './invitations.controller.js';
import { InvitationsRepository } from './invitations.repository.js';
import { InvitationsService } from './invitations.service.js';
import { ProjectAccessRepository } from './project-access.repository.js';
import { ProjectAccessService } from './project-access.service.js';
import { ProjectLocator } from './project-locator.js';
import { ProjectRoleGuard } from './project-role.guard.js';
import { ProjectsController } from './projects.controller.js';
import { ProjectsRepository } from './projects.repository.js';
import { ProjectsService } from './projects.service.js';

@Module({
  imports: [
    UsersModule,
    TypeOrmModule.forFeature([
      ProjectEntity,
      ProjectMemberEntity,
      GroupEntity,
      GroupBindingEntity,
      GroupMemberEntity,
      InvitationEntity,
    ]),
  ],
  controllers: [ProjectsController, InvitationsController],
  providers: [
    ProjectAccessRepository,
    ProjectAccessService,
    ProjectRoleGuard,
    ProjectLocator,
    ProjectsRepository,
    ProjectsService,
    InvitationsRepository,
    InvitationsService,
  ],
  exports: [ProjectAccessService, ProjectRoleGuard, ProjectLocator, ProjectsRepository],
})
export class AccessModule {}
