import { Injectable, Logger } from '@nestjs/common';
import { EventEmitter2, OnEvent } from '@nestjs/event-emitter';
import type { EntityManager } from 'typeorm';
import { AppConfig } from '../config/app-config.js';
import { MailService } from '../mail/mail.service.js';
import { RESULTS_EVENT, type ResultsEvent } from '../results/results.events.js';
import { ResultsService } from '../results/results.service.js';
import { STABILITY_EVENT, type StabilityEvent } from '../stability/stability.events.js';
import { NOTIFY, type NotifyEvent, WEBHOOKS_QUEUED } from './notification.events.js';
import { fitPayload, signatureLabel } from './payload.js';
import { SubscriptionsRepository } from './subscriptions.repository.js';
import { WebhooksRepository } from './webhooks.repository.js';

/**
 * The one way into notifications for every feature: `enqueue(event, tx)` writes an event's deliveries (one per
 * subscribed active webhook) and its members' mail in the caller's transaction, so they commit or roll back with
 * the change that caused them; the NOTIFY domain event does the same right after the emitter's commit. Both are
 * idempotent by the event's key. The senders of every replica take it from there (WebhookSenderService, the mail
 * outbox's sender); nothing here waits for a receiver.
 */
@Injectable()
export class NotificationOutbox {
  private readonly logger = new Logger('Notifications');

  constructor(
    private readonly webhooks: WebhooksRepository,
    private readonly subscriptions: SubscriptionsRepository,
    private readonly mail: MailService,
    private readonly config: AppConfig,
    private readonly events: EventEmitter2,
    private readonly results: ResultsService,
  ) {}

  /** Stores the event's deliveries and mail; answers the number of webhook deliveries added. */
  async enqueue(event: NotifyEvent, tx?: EntityManager): Promise<number> {
    const work = async (manager: EntityManager) => {
      const key = event.key ?? `${event.type}:${event.runId ?? ''}`;
      const data = {
        ...event.data,
        ...(event.runId ? { url: `${this.config.http.baseUrl}/runs/${event.runId}` } : {}),
      };
      const payload = {
        timestamp: new Date().toISOString(),
        projectId: event.projectId,
        data: fitPayload(event.type, data),
      };
      const added = await this.webhooks.enqueue(manager, {
        projectId: event.projectId,
        event: event.type,
        key,
        payload,
      });
      if (event.runId && (event.type === 'run.failed' || event.type === 'failure.new')) {
        await this.queueMail(manager, event as NotifyEvent & { runId: string });
      }
      return added;
    };
    const added = tx ? await work(tx) : await this.webhooks.transaction(work);
    if (added) {
      // Emitted within a caller's transaction too: a sender that looks before the commit finds nothing and the
      // next poll (at most a second later) does.
      this.events.emit(WEBHOOKS_QUEUED);
    }
    return added;
  }

  /** One ping to one webhook, whatever its events (POST /api/webhooks/{id}/test). */
  async ping(projectId: string, webhookId: string): Promise<void> {
    await this.webhooks.transaction((tx) =>
      this.webhooks.enqueue(tx, {
        projectId,
        event: 'ping',
        key: `ping:${Date.now()}:${Math.random().toString(36).slice(2)}`,
        webhookId,
        payload: {
          timestamp: new Date().toISOString(),
          projectId,
          data: {
            webhookId: Number(webhookId),
            message: 'A test delivery: this webhook is reachable and signed.',
          },
        },
      }),
    );
    this.events.emit(WEBHOOKS_QUEUED);
  }

  /** Lets this replica's sender look now (a redelivery), instead of at its next poll. */
  wakeSenders(): void {
    this.events.emit(WEBHOOKS_QUEUED);
  }

  @OnEvent(NOTIFY, { async: true, promisify: true })
  async onNotify(event: NotifyEvent): Promise<void> {
    try {
      await this.enqueue(event);
    } catch (error) {
      this.logger.error(
        `Event ${event.type} of project ${event.projectId} was not enqueued: ${(error as Error).message}`,
      );
    }
  }

  /** Every finished run, right after its commit (V1 finish, V2 finish message, an import). */
  @OnEvent(RESULTS_EVENT, { async: true, promisify: true })
  async onResults(event: ResultsEvent): Promise<void> {
    if (event.event !== 'run.finished') {
      return;
    }
    await this.onNotify({
      type: 'run.finished',
      projectId: event.projectId,
      runId: event.runId,
      data: { run: event.data.run },
    });
  }

  /**
   * A test that turned flaky or was quarantined (by its results or by a person), right after that committed: the
   * test as the API shows it (its state, flake rate, quarantine) and a link to its history.
   */
  @OnEvent(STABILITY_EVENT, { async: true, promisify: true })
  async onStability(event: StabilityEvent): Promise<void> {
    if (event.event !== 'test.flaky' && event.event !== 'test.quarantined') {
      return;
    }
    let test: Awaited<ReturnType<ResultsService['getTest']>>;
    try {
      test = await this.results.getTest(event.projectId, event.testId);
    } catch {
      return; // gone meanwhile (its project deleted, or retention)
    }
    // One delivery per change: the run that made it so, else the quarantine's start.
    const when = event.runId ? `run:${event.runId}` : (test.quarantine?.since ?? new Date().toISOString());
    await this.onNotify({
      type: event.event,
      projectId: event.projectId,
      key: `${event.event}:${event.testId}:${when}`,
      data: {
        test,
        runId: event.runId ? Number(event.runId) : null,
        url: `${this.config.http.baseUrl}/projects/${event.projectId}/tests/${event.testId}`,
      },
    });
  }

  private async queueMail(tx: EntityManager, event: NotifyEvent & { runId: string }): Promise<void> {
    const kind = event.type === 'run.failed' ? 'run-failed' : 'new-failures';
    const recipients = await this.subscriptions.claimRecipients(tx, event.projectId, event.runId, kind);
    if (!recipients.length) {
      return;
    }
    const about = await this.subscriptions.runAndProject(tx, event.runId);
    if (!about) {
      return;
    }
    for (const r of recipients) {
      const common = {
        fullName: r.fullName,
        projectId: event.projectId,
        projectName: about.projectName,
        runId: event.runId,
        runName: about.runName,
      };
      if (kind === 'run-failed') {
        await this.mail.queue(
          'run-failed',
          r.email,
          { ...common, ...runFailedText(event.data, about.counts) },
          tx,
        );
      } else {
        const signatures = Array.isArray(event.data.signatures) ? (event.data.signatures as unknown[]) : [];
        const count = typeof event.data.count === 'number' ? event.data.count : signatures.length;
        await this.mail.queue(
          'new-failures',
          r.email,
          { ...common, count, names: signatures.slice(0, 20).map(signatureLabel) },
          tx,
        );
      }
    }
  }
}

function runFailedText(
  data: Record<string, unknown>,
  counts: { total: number; passed: number; failed: number; broken: number; skipped: number },
): { summary: string; reasons: string[] } {
  const gate = (data.gate ?? {}) as {
    conditions?: { name: string; expected: unknown; actual: unknown; passed: boolean }[];
  };
  const reasons = (gate.conditions ?? [])
    .filter((c) => !c.passed)
    .map((c) => `${c.name}: expected ${JSON.stringify(c.expected)}, was ${JSON.stringify(c.actual)}`);
  return {
    summary: `${counts.total} tests: ${counts.passed} passed, ${counts.failed} failed, ${counts.broken} broken, ${counts.skipped} skipped.`,
    reasons,
  };
}
