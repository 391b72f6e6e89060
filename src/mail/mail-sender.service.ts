import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { OnEvent } from '@nestjs/event-emitter';
import { BrokenCircuitError, CircuitState } from 'cockatiel';
import { MailTransport } from '../infra/mail-transport/mail-transport.js';
import { MailOutboxRepository, QueuedMail } from './mail-outbox.repository.js';
import { MAIL_QUEUED } from './mail.service.js';
import { TrialCircuitBreaker } from './mail-circuit-breaker.js';
import { Metrics } from '../health/metrics.js';
import { OutboxPump } from '../common/outbox-pump.js';

/** How often each replica looks for due mail (new mail of this replica is sent at once). */
export const MAIL_POLL_MS = 1_000;
const BATCH = 5;
const MAX_ATTEMPTS = 8;
const KEEP_DAYS = 30;
const PRUNE_EVERY_MS = 3_600_000;
const STATES = ['closed', 'open', 'half-open', 'isolated'];

/**
 * The background sender of every replica: claims due messages from the outbox, sends them through the
 * circuit breaker, and records the outcome. Temporary failures are retried with backoff, permanent ones
 * (5xx) and those that keep failing end as FAILED. Nothing here ever holds an HTTP request.
 */
@Injectable()
export class MailSenderService implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('Mail');
  private readonly pump: OutboxPump<QueuedMail>;

  constructor(
    private readonly outbox: MailOutboxRepository,
    private readonly transport: MailTransport,
    private readonly breaker: TrialCircuitBreaker,
    private readonly metrics: Metrics,
  ) {
    breaker.onStateChange((state) => {
      const text = `Mail circuit breaker ${STATES[state]}`;
      if (state === CircuitState.Open) {
        this.logger.warn(`${text}: sends return at once for 60 s without contacting the relay`);
      } else {
        this.logger.log(state === CircuitState.HalfOpen ? `${text}: 3 trial sends decide` : text);
      }
      this.metrics.mailBreakerState.set(state);
    });
    this.pump = new OutboxPump({
      name: 'Mail sender',
      logger: this.logger,
      pollMs: MAIL_POLL_MS,
      claim: () => this.outbox.claimDue(BATCH),
      send: (mail) => this.deliver(mail),
      prune: () => this.prune(),
      pruneEveryMs: PRUNE_EVERY_MS,
    });
  }

  onApplicationBootstrap(): void {
    this.pump.start();
  }

  /** Delivery records (bodies already gone) are kept for a month, for support questions. */
  private async prune(): Promise<void> {
    try {
      const removed = await this.outbox.prune(KEEP_DAYS);
      if (removed) {
        this.logger.log(`Removed ${removed} delivery record(s) older than ${KEEP_DAYS} days`);
      }
    } catch (error) {
      this.logger.error(`Pruning the outbox failed: ${(error as Error).message}`);
    }
  }

  async onApplicationShutdown(): Promise<void> {
    await this.pump.stop();
    await this.transport.close();
  }

  @OnEvent(MAIL_QUEUED)
  wake(): void {
    this.pump.wake();
  }

  private async deliver(mail: QueuedMail): Promise<void> {
    try {
      await this.breaker.execute(() =>
        this.transport.send({ kind: mail.kind, to: mail.recipient, subject: mail.subject, text: mail.body }),
      );
      await this.outbox.markSent(mail.id);
      this.metrics.mailSent.inc({ kind: mail.kind });
      this.logger.log(`Mail sent: ${mail.kind}`);
    } catch (error) {
      await this.failed(mail, error as Error & { responseCode?: number; code?: string });
    }
  }

  private async failed(
    mail: QueuedMail,
    error: Error & { responseCode?: number; code?: string },
  ): Promise<void> {
    if (error instanceof BrokenCircuitError) {
      // Not an attempt: the relay was not contacted. Try again once the circuit lets calls through.
      await this.outbox.retryLater(
        mail.id,
        Math.max(1, Math.ceil(this.breaker.retryAfterMs / 1000)),
        error.message,
        false,
      );
      return;
    }
    const reason = describe(error);
    const permanent =
      error.responseCode !== undefined && error.responseCode >= 500 && error.responseCode < 600;
    if (permanent || mail.attempts + 1 >= MAX_ATTEMPTS) {
      await this.outbox.markFailed(mail.id, reason);
      this.metrics.mailFailed.inc({ kind: mail.kind });
      this.logger.error(
        `Mail failed: ${mail.kind} to ${mail.recipient} after ${mail.attempts + 1} attempt(s): ${reason}`,
      );
      return;
    }
    const delay = Math.min(3600, 30 * 2 ** mail.attempts);
    await this.outbox.retryLater(mail.id, delay, reason, true);
    this.logger.warn(
      `Mail not sent yet: ${mail.kind} (attempt ${mail.attempts + 1}, next in ${delay} s): ${reason}`,
    );
  }
}

/** The relay's answer or the socket error, without the message itself. */
function describe(error: Error & { responseCode?: number; code?: string; response?: string }): string {
  const parts = [error.code, error.responseCode, error.response ?? error.message].filter(
    (p) => p !== undefined,
  );
  return parts.join(' ').replace(/\s+/g, ' ').slice(0, 300);
}
