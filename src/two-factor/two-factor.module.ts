import { Module } from '@nestjs/common';
import { AppConfig } from '../config/app-config.js';
import { UsersModule } from '../users/users.module.js';
import { Totp } from './totp.js';
import { TwoFactorCrypto } from './two-factor-crypto.js';
import { TwoFactorController } from './two-factor.controller.js';
import { TwoFactorRepository } from './two-factor.repository.js';
import { TwoFactorService } from './two-factor.service.js';

@Module({
  imports: [UsersModule],
  controllers: [TwoFactorController],
  providers: [
    TwoFactorService,
    TwoFactorRepository,
    { provide: Totp, useFactory: () => new Totp() },
    {
      provide: TwoFactorCrypto,
      inject: [AppConfig],
      useFactory: (config: AppConfig) => new TwoFactorCrypto(config.encryption.key),
    },
  ],
  exports: [TwoFactorService],
})
export class TwoFactorModule {}
