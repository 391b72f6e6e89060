import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { BillingService } from './billing.service.js';

export const BILLING_CHECK_MS = 60_000;

/** Runs the subscription check in every replica once a minute; the check itself makes each notice unique. */
@Injectable()
export class BillingScheduler implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(BillingScheduler.name);
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;

  constructor(private readonly billing: BillingService) {}

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => this.tick(), BILLING_CHECK_MS);
    this.timer.unref();
    this.tick();
  }

  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }

  private tick(): void {
    if (this.running) {
      return;
    }
    this.running = this.billing
      .checkSubscription()
      .catch((error: Error) => this.logger.error(`Subscription check failed: ${error.message}`))
      .finally(() => (this.running = undefined));
  }
}
