import { Module, OnModuleInit } from '@nestjs/common';
import { AccessModule } from '../access/access.module.js';
import { ProjectLocator } from '../access/project-locator.js';
import { AppConfig } from '../config/app-config.js';
import { HealthModule } from '../health/health.module.js';
import { MailModule } from '../mail/mail.module.js';
import { ResultsModule } from '../results/results.module.js';
import { NotificationOutbox } from './notification-outbox.js';
import { NotificationsMeController } from './notifications-me.controller.js';
import { SubscriptionsRepository } from './subscriptions.repository.js';
import { WebhookSecrets } from './webhook-secrets.js';
import { WebhookSenderService } from './webhook-sender.service.js';
import { WebhooksController } from './webhooks.controller.js';
import { WebhooksRepository } from './webhooks.repository.js';
import { WebhooksService } from './webhooks.service.js';

/**
 * Notifications (API.md, "Notifications: webhooks and mail"): webhooks with their durable delivery outbox and
 * background sender, and members' mail. Other features enqueue events through NotificationOutbox (in their
 * transaction) or the NOTIFY domain event (after their commit); see notification.events.ts.
 */
@Module({
  imports: [AccessModule, MailModule, HealthModule, ResultsModule],
  controllers: [WebhooksController, NotificationsMeController],
  providers: [
    {
      provide: WebhookSecrets,
      inject: [AppConfig],
      useFactory: (config: AppConfig) => new WebhookSecrets(config.encryption.key),
    },
    WebhooksRepository,
    SubscriptionsRepository,
    NotificationOutbox,
    WebhooksService,
    WebhookSenderService,
  ],
  exports: [NotificationOutbox],
})
export class NotificationsModule implements OnModuleInit {
  constructor(
    private readonly locator: ProjectLocator,
    private readonly webhooks: WebhooksRepository,
  ) {}

  onModuleInit(): void {
    this.locator.register('webhookId', 'Webhook', (id) => this.webhooks.projectOfWebhook(id));
  }
}
