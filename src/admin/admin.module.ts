import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ApiTokensModule } from '../api-tokens/api-tokens.module.js';
import { AuthModule } from '../auth/auth.module.js';
import { UserEntity } from '../users/user.entity.js';
import { UsersModule } from '../users/users.module.js';
import { AdminAudit } from './admin-audit.js';
import { AdminGroupsController } from './admin-groups.controller.js';
import { AdminGroupsRepository } from './admin-groups.repository.js';
import { AdminGroupsService } from './admin-groups.service.js';
import { AdminUsersController } from './admin-users.controller.js';
import { AdminUsersRepository } from './admin-users.repository.js';
import { AdminUsersService } from './admin-users.service.js';
import { BindingsPipe } from './bindings.pipe.js';

/** Platform administration: users (admin rights, disabling) and groups (project bindings, manual members). */
@Module({
  imports: [UsersModule, AuthModule, ApiTokensModule, TypeOrmModule.forFeature([UserEntity])],
  controllers: [AdminUsersController, AdminGroupsController],
  providers: [
    AdminAudit,
    AdminUsersRepository,
    AdminUsersService,
    AdminGroupsRepository,
    AdminGroupsService,
    BindingsPipe,
  ],
})
export class AdminModule {}
