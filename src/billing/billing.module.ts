import { Module } from '@nestjs/common';
import { MailModule } from '../mail/mail.module.js';
import { BillingController } from './billing.controller.js';
import { BillingScheduler } from './billing.scheduler.js';
import { BillingService } from './billing.service.js';
import { SubscriptionRepository } from './subscription.repository.js';

/** The workspace subscription, the billing webhook and the billing notices. */
@Module({
  imports: [MailModule],
  controllers: [BillingController],
  providers: [BillingService, BillingScheduler, SubscriptionRepository],
})
export class BillingModule {}
