import { Module } from '@nestjs/common';
import { AppConfig } from '../config/app-config.js';
import { HealthModule } from '../health/health.module.js';
import { MailTransport } from '../infra/mail-transport/mail-transport.js';
import { OutboxMailTransport } from '../infra/mail-transport/outbox-mail.transport.js';
import { SmtpMailTransport } from '../infra/mail-transport/smtp-mail.transport.js';
import { mailCircuitBreaker, TrialCircuitBreaker } from './mail-circuit-breaker.js';
import { MailListeners } from './mail.listeners.js';
import { MailOutboxRepository } from './mail-outbox.repository.js';
import { MailSenderService } from './mail-sender.service.js';
import { MailService } from './mail.service.js';

/** Outbound mail: templates, the per-recipient limit, the durable outbox and its background sender. */
@Module({
  imports: [HealthModule],
  providers: [
    {
      provide: MailTransport,
      inject: [AppConfig],
      useFactory: (config: AppConfig): MailTransport =>
        config.mail.smtp
          ? new SmtpMailTransport(config.mail.smtp, config.mail.from)
          : new OutboxMailTransport(config.mail.outboxDir, config.mail.from),
    },
    { provide: TrialCircuitBreaker, useFactory: () => mailCircuitBreaker() },
    MailOutboxRepository,
    MailService,
    MailSenderService,
    MailListeners,
  ],
  exports: [MailService],
})
export class MailModule {}
