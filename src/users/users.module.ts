import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { BootstrapAdminService } from './bootstrap-admin.service.js';
import { PasswordHasher } from './password-hasher.js';
import { UserCache } from './user-cache.js';
import { UserEntity } from './user.entity.js';
import { UsersRepository } from './users.repository.js';

@Module({
  imports: [TypeOrmModule.forFeature([UserEntity])],
  providers: [UsersRepository, UserCache, PasswordHasher, BootstrapAdminService],
  exports: [UsersRepository, UserCache, PasswordHasher],
})
export class UsersModule {}
