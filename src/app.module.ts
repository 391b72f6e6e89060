import { DynamicModule, Module } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { EventEmitterModule } from '@nestjs/event-emitter';
import { AccessModule } from './access/access.module.js';
import { AdminModule } from './admin/admin.module.js';
import { ApiTokensModule } from './api-tokens/api-tokens.module.js';
import { AuditModule } from './audit/audit.module.js';
import { BillingModule } from './billing/billing.module.js';
import { AuthModule } from './auth/auth.module.js';
import { AllExceptionsFilter } from './common/all-exceptions.filter.js';
import { AppConfig } from './config/app-config.js';
import { ConfigModule } from './config/config.module.js';
import { DatabaseModule } from './database/database.module.js';
import { GateModule } from './gates/gate.module.js';
import { HealthModule } from './health/health.module.js';
import { IngestV1Module } from './ingest-v1/ingest-v1.module.js';
import { InsightsModule } from './insights/insights.module.js';
import { SettingsModule } from './settings/settings.module.js';
import { StabilityModule } from './stability/stability.module.js';
import { TriageModule } from './triage/triage.module.js';
import { RetentionModule } from './retention/retention.module.js';
import { IngestV2Module } from './ingest-v2/ingest-v2.module.js';
import { ImportModule } from './import/import.module.js';
import { QueueModule } from './infra/queue/queue.module.js';
import { RelayModule } from './infra/relay/relay.module.js';
import { LiveModule } from './live/live.module.js';
import { KvModule } from './infra/kv/kv.module.js';
import { MailModule } from './mail/mail.module.js';
import { NotificationsModule } from './notifications/notifications.module.js';
import { AccountModule } from './users/account.module.js';
import { UsersModule } from './users/users.module.js';

@Module({})
export class AppModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ConfigModule.forRoot(config),
        EventEmitterModule.forRoot(),
        DatabaseModule,
        KvModule,
        QueueModule,
        RelayModule,
        HealthModule,
        AuditModule,
        MailModule,
        UsersModule,
        AuthModule,
        AccountModule,
        ApiTokensModule,
        AccessModule,
        IngestV1Module,
        InsightsModule,
        SettingsModule,
        StabilityModule,
        TriageModule,
        GateModule,
        RetentionModule,
        IngestV2Module,
        ImportModule,
        LiveModule,
        AdminModule,
        BillingModule,
        NotificationsModule,
      ],
      providers: [{ provide: APP_FILTER, useClass: AllExceptionsFilter }],
    };
  }
}
