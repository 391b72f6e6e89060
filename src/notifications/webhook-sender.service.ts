import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { EventEmitter2, OnEvent } from '@nestjs/event-emitter';
import { AUDIT_EVENT, type AuditRecord } from '../audit/audit.events.js';
import { OutboxPump } from '../common/outbox-pump.js';
import { AppConfig } from '../config/app-config.js';
import { Metrics } from '../health/metrics.js';
import { MailService } from '../mail/mail.service.js';
import { checkTarget, LOOKUP_LIMIT_MS, RefusedAddressError, UnresolvedHostError } from './address-policy.js';
import { WEBHOOKS_QUEUED } from './notification.events.js';
import { slackMessage } from './slack-message.js';
import { SubscriptionsRepository } from './subscriptions.repository.js';
import { postPinned, signWebhook } from './webhook-http.js';
import { WebhookSecrets } from './webhook-secrets.js';
import { ClaimedDelivery, WebhooksRepository } from './webhooks.repository.js';

/** How often each replica looks for due deliveries (its own new ones are sent at once). */
export const WEBHOOK_POLL_MS = 1_000;
const BATCH = 10;
/** Attempts of one delivery: the first and 7 retries, 1, 2, 4 ... 64 retry bases apart (API.md). */
export const MAX_ATTEMPTS = 8;
/** A webhook failing this long without a success in between is turned off and its project's OWNERs mailed. */
const FAILING_LIMIT_MS = 24 * 3600 * 1000;
const KEEP_DAYS = 30;
const PRUNE_EVERY_MS = 3_600_000;
/** What a claim's lease keeps beyond the longest attempt (the host's lookup, then the POST): time to record it. */
const LEASE_SPARE_S = 10;
/** Of that spare time, what an attempt must leave to its record: one that could not is not begun. */
const RECORD_MS = 5_000;

/** A claimed delivery, with when (performance.now()) its attempt must have been answered to be recorded in time. */
type Claim = ClaimedDelivery & { answerBy: number };

/**
 * The background sender of every replica: claims due deliveries from the outbox (FOR UPDATE SKIP LOCKED, with a
 * lease longer than one attempt may take: the host's lookup and the POST, each within its limit; so a replica that
 * dies mid-send gives its deliveries back), POSTs each to its checked, pinned address, and records the outcome:
 * 2xx delivered; 410 turns the webhook off; anything else, or no answer in time, is retried with exponential
 * backoff under the same webhook-id. An attempt that could not end within its lease is not begun (another replica
 * may claim the row once the lease ends: no attempt is sent twice), and an outcome is recorded only under the claim
 * that sent it.
 */
@Injectable()
export class WebhookSenderService implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('Webhooks');
  private readonly pump: OutboxPump<Claim>;

  constructor(
    private readonly webhooks: WebhooksRepository,
    private readonly subscriptions: SubscriptionsRepository,
    private readonly secrets: WebhookSecrets,
    private readonly mail: MailService,
    private readonly config: AppConfig,
    private readonly metrics: Metrics,
    private readonly events: EventEmitter2,
  ) {
    // The lease: longer than one attempt may take, so a replica that dies mid-send gives its rows back.
    const lease = Math.ceil((LOOKUP_LIMIT_MS + this.config.webhooks.timeoutMs) / 1000) + LEASE_SPARE_S;
    this.pump = new OutboxPump({
      name: 'Webhook sender',
      logger: this.logger,
      pollMs: WEBHOOK_POLL_MS,
      claim: async () => {
        // Counted from before the claim was asked for: the lease the database sets ends no sooner.
        const answerBy = performance.now() + lease * 1000 - RECORD_MS;
        return (await this.webhooks.claimDue(BATCH, lease)).map((d) => ({ ...d, answerBy }));
      },
      send: (delivery) => this.deliver(delivery),
      prune: () => this.prune(),
      pruneEveryMs: PRUNE_EVERY_MS,
    });
  }

  onApplicationBootstrap(): void {
    this.metrics.gaugeFrom('tms_webhook_outbox_due', 'Webhook deliveries due now and not yet sent', () =>
      this.webhooks.countDue(),
    );
    this.pump.start();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.pump.stop();
  }

  /** Finished deliveries are kept a month, for the deliveries list and support questions. */
  private async prune(): Promise<void> {
    try {
      const removed = await this.webhooks.prune(KEEP_DAYS);
      if (removed) {
        this.logger.log(`Removed ${removed} webhook delivery record(s) older than ${KEEP_DAYS} days`);
      }
    } catch (error) {
      this.logger.error(`Pruning the webhook deliveries failed: ${(error as Error).message}`);
    }
  }

  @OnEvent(WEBHOOKS_QUEUED)
  wake(): void {
    this.pump.wake();
  }

  private async deliver(d: Claim): Promise<void> {
    const body = JSON.stringify(
      d.format === 'slack'
        ? slackMessage(d.event, d.payload.data)
        : {
            type: d.event,
            id: d.messageId,
            timestamp: d.payload.timestamp,
            projectId: Number(d.projectId),
            data: d.payload.data,
          },
    );
    let target;
    try {
      target = await checkTarget(d.url, this.config.webhooks.allowPrivate);
    } catch (error) {
      if (error instanceof UnresolvedHostError) {
        // Nothing was sent: an attempt to try again later, as a resolver's outage passes.
        await this.failed(d, null, error.message);
        return;
      }
      if (error instanceof RefusedAddressError) {
        // Refused at send time (the name now resolves to a private address): nothing was sent, nor will be.
        await this.giveUp(d, `Refused: ${error.message}`, 'refused');
        this.logger.warn(`Webhook ${d.webhookId} delivery ${d.id} refused: ${error.message}`);
        return;
      }
      throw error;
    }
    const headers: Record<string, string> = {};
    if (d.format !== 'slack') {
      const timestamp = Math.floor(Date.now() / 1000);
      let secret: string;
      try {
        secret = this.secrets.decrypt(d.secretEncrypted, d.webhookId);
      } catch (error) {
        // The encryption key changed: nothing can be signed until the webhook gets a new secret (delete and add).
        await this.giveUp(d, (error as Error).message, 'failed');
        this.logger.error(
          `Webhook ${d.webhookId}: its secret does not decrypt under the configured SVC_ENCRYPTION_KEY`,
        );
        return;
      }
      headers['webhook-id'] = d.messageId;
      headers['webhook-timestamp'] = String(timestamp);
      headers['webhook-signature'] = signWebhook(secret, d.messageId, timestamp, body);
    }
    if (performance.now() + this.config.webhooks.timeoutMs > d.answerBy) {
      // Its answer could come after the lease: left unsent, for the next claim of the row (this replica's or not).
      this.logger.warn(
        `Webhook ${d.webhookId} delivery ${d.id}: its claim is too near its end to send; left due`,
      );
      return;
    }
    let status: number | null = null;
    let error: string;
    try {
      status = (await postPinned(target, headers, body, this.config.webhooks.timeoutMs)).status;
      if (status >= 200 && status < 300) {
        if (await this.webhooks.markDelivered(d, status)) {
          this.metrics.webhookDeliveries.inc({ result: 'delivered' });
        } else {
          this.claimLost(d);
        }
        return;
      }
      error = `HTTP ${status}`;
    } catch (e) {
      error = describe(e as Error & { code?: string });
    }
    await this.failed(d, status, error);
  }

  private get policy() {
    return { maxAttempts: MAX_ATTEMPTS, retryBaseSeconds: this.config.webhooks.retryBaseSeconds };
  }

  private async failed(d: ClaimedDelivery, status: number | null, error: string): Promise<void> {
    const gone = status === 410;
    const outcome = await this.webhooks.markAttemptFailed(d, {
      ...this.policy,
      statusCode: status,
      error,
      final: gone,
    });
    if (!outcome) {
      this.claimLost(d);
      return;
    }
    this.metrics.webhookDeliveries.inc({ result: outcome.givenUp ? 'failed' : 'retrying' });
    this.logger.warn(
      `Webhook ${d.webhookId} delivery ${d.id} attempt ${outcome.attempts} failed: ${error}${outcome.givenUp ? '; given up' : '; will be retried'}`,
    );
    if (gone) {
      await this.deactivate(d, 'the receiver answered 410 Gone', false);
    } else if (Date.now() - outcome.failingSince.getTime() >= FAILING_LIMIT_MS) {
      await this.deactivate(d, 'its deliveries failed for 24 hours in a row', true);
    }
  }

  /** A last attempt that sent nothing: recorded, and counted under `result`, only while the claim holds. */
  private async giveUp(d: ClaimedDelivery, error: string, result: 'refused' | 'failed'): Promise<void> {
    const outcome = await this.webhooks.markAttemptFailed(d, {
      ...this.policy,
      statusCode: null,
      error,
      final: true,
    });
    if (outcome) {
      this.metrics.webhookDeliveries.inc({ result });
    } else {
      this.claimLost(d);
    }
  }

  /** The row was claimed again (its lease had ended) or redelivered meanwhile: its new owner records it. */
  private claimLost(d: ClaimedDelivery): void {
    this.logger.warn(
      `Webhook ${d.webhookId} delivery ${d.id}: its claim ended before its outcome was recorded`,
    );
  }

  /** Turns the webhook off once (whichever replica gets there first), audited; OWNERs mailed when `mailOwners`. */
  private async deactivate(d: ClaimedDelivery, reason: string, mailOwners: boolean): Promise<void> {
    const done = await this.webhooks.transaction(async (tx) => {
      if (!(await this.webhooks.deactivate(tx, d.webhookId, reason))) {
        return false;
      }
      if (mailOwners) {
        const { projectName, emails } = await this.subscriptions.owners(tx, d.projectId);
        for (const email of emails) {
          await this.mail.queue(
            'webhook-deactivated',
            email,
            { projectId: d.projectId, projectName, url: d.url, reason },
            tx,
          );
        }
      }
      return true;
    });
    if (done) {
      this.logger.warn(`Webhook ${d.webhookId} of project ${d.projectId} turned off: ${reason}`);
      const record: AuditRecord = {
        type: 'WEBHOOK_DEACTIVATED',
        actorId: null,
        target: `project:${d.projectId}`,
        details: { webhookId: Number(d.webhookId), url: d.url, reason },
      };
      this.events.emit(AUDIT_EVENT, record);
    }
  }
}

/** The network error without its stack: a code and a short message. */
function describe(error: Error & { code?: string }): string {
  return [error.code, error.message].filter(Boolean).join(' ').replace(/\s+/g, ' ').slice(0, 300);
}
