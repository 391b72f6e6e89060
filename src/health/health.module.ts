import { Global, Module } from '@nestjs/common';
import { LdapModule } from '../ldap/ldap.module.js';
import { HealthController } from './health.controller.js';
import { Metrics } from './metrics.js';
import { MetricsListeners } from './metrics.listeners.js';

@Global()
@Module({
  imports: [LdapModule],
  controllers: [HealthController],
  providers: [Metrics, MetricsListeners],
  exports: [Metrics],
})
export class HealthModule {}
