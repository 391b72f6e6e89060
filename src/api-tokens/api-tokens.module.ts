import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ApiTokenEntity } from './api-token.entity.js';
import { ApiTokenAuthenticator } from './api-token.authenticator.js';
import { ApiTokenStrategy } from './api-token.strategy.js';
import { ApiTokensController } from './api-tokens.controller.js';
import { ApiTokensRepository } from './api-tokens.repository.js';
import { ApiTokensService } from './api-tokens.service.js';

@Module({
  imports: [TypeOrmModule.forFeature([ApiTokenEntity])],
  controllers: [ApiTokensController],
  providers: [ApiTokensRepository, ApiTokenAuthenticator, ApiTokenStrategy, ApiTokensService],
  exports: [ApiTokensRepository, ApiTokenAuthenticator, ApiTokenStrategy],
})
export class ApiTokensModule {}
