import { Module, OnModuleInit } from '@nestjs/common';
import { AccessModule } from '../access/access.module.js';
import { ProjectLocator } from '../access/project-locator.js';
import { AppConfig } from '../config/app-config.js';
import { HealthModule } from '../health/health.module.js';
import { MailModule } from '../mail/mail.module.js';
import { ResultsObservers } from '../results/results-observers.js';
import { ResultsModule } from '../results/results.module.js';
import { NotificationOutbox } from './notification-outbox.js';
import { NotificationsMeController } from './notifications-me.controller.js';
import { PendingRepository } from './pending.repository.js';
import { PendingSweeper } from './pending.sweeper.js';
import { SubscriptionsRepository } from './subscriptions.repository.js';
import { WebhookSecrets } from './webhook-secrets.js';
import { WebhookSenderService } from './webhook-sender.service.js';
import { WebhooksController } from './webhooks.controller.js';
import { WebhooksRepository } from './webhooks.repository.js';
import { WebhooksService } from './webhooks.service.js';

/**
 * Notifications (API.md, "Notifications: webhooks and mail"): webhooks with their durable delivery outbox and
 * background sender, and members' mail. The events a change causes are owed in its transaction
 * (NotificationOutbox.owe: a run's finish through the results observers, its gate, test health) and announced right
 * after its commit, or by any replica's sweep when its own replica died first; see notification.events.ts.
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
    PendingRepository,
    NotificationOutbox,
    PendingSweeper,
    WebhooksService,
    WebhookSenderService,
  ],
  exports: [NotificationOutbox],
})
export class NotificationsModule implements OnModuleInit {
  constructor(
    private readonly locator: ProjectLocator,
    private readonly webhooks: WebhooksRepository,
    private readonly observers: ResultsObservers,
    private readonly outbox: NotificationOutbox,
  ) {}

  onModuleInit(): void {
    this.locator.register('webhookId', 'Webhook', (id) => this.webhooks.projectOfWebhook(id));
    // Every run's finish owes run.finished (and what FinishNotices add), recorded in the finish's transaction.
    this.observers.register({
      runFinished: (tx, run) =>
        this.outbox.owe({ type: 'run.finished', projectId: run.projectId, runId: run.id }, tx),
    });
  }
}
