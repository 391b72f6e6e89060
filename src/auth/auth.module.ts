import { LdapModule } from '../ldap/ldap.module.js';
import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { JwtModule } from '@nestjs/jwt';
import { PassportModule } from '@nestjs/passport';
import { AppConfig } from '../config/app-config.js';
import { ApiTokensModule } from '../api-tokens/api-tokens.module.js';
import { TwoFactorModule } from '../two-factor/two-factor.module.js';
import { UsersModule } from '../users/users.module.js';
import { AccessTokenService } from './access-token.service.js';
import { AuthController } from './auth.controller.js';
import { AuthService } from './auth.service.js';
import { AuthenticationGuard } from './authentication.guard.js';
import { JwtStrategy } from './jwt.strategy.js';
import { jwtKey } from './jwt-key.js';
import { ClientLimits } from './client-limits.js';
import { RefreshTokenService } from './refresh-token.service.js';
import { SessionsService } from './sessions.service.js';
import { SameSiteGuard } from './same-site.guard.js';

@Module({
  imports: [
    UsersModule,
    ApiTokensModule,
    TwoFactorModule,
    LdapModule,
    PassportModule,
    JwtModule.registerAsync({
      inject: [AppConfig],
      useFactory: (config: AppConfig) => ({
        secret: jwtKey(config),
        signOptions: { algorithm: 'HS256' },
        verifyOptions: { algorithms: ['HS256'] },
      }),
    }),
  ],
  controllers: [AuthController],
  providers: [
    AuthService,
    AccessTokenService,
    RefreshTokenService,
    SessionsService,
    JwtStrategy,
    ClientLimits,
    SameSiteGuard,
    AuthenticationGuard,
    { provide: APP_GUARD, useExisting: AuthenticationGuard },
  ],
  exports: [AccessTokenService, RefreshTokenService, SessionsService, ClientLimits, AuthenticationGuard],
})
export class AuthModule {}
