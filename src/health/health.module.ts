import { Global, Module } from '@nestjs/common';
import { HealthController } from './health.controller.js';
import { Metrics } from './metrics.js';

@Global()
@Module({ controllers: [HealthController], providers: [Metrics], exports: [Metrics] })
export class HealthModule {}
