import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module.js';
import { MailModule } from '../mail/mail.module.js';
import { AccountController } from './account.controller.js';
import { AccountService } from './account.service.js';
import { AccountTokensRepository } from './account-tokens.repository.js';
import { UsersModule } from './users.module.js';

/** Self-service account flows: registration, email verification, password reset. */
@Module({
  imports: [UsersModule, AuthModule, MailModule],
  controllers: [AccountController],
  providers: [AccountService, AccountTokensRepository],
})
export class AccountModule {}
