import { Injectable, Logger } from '@nestjs/common';
import { EventEmitter2, OnEvent } from '@nestjs/event-emitter';
import type { EntityManager } from 'typeorm';
import { AppError, ErrorCode } from '../common/app-error.js';
import { AppConfig } from '../config/app-config.js';
import { MailService } from '../mail/mail.service.js';
import type { RunDto } from '../results/dto/results.dto.js';
import {
  RESULTS_EVENT,
  RUN_FINISHED_EVENT,
  type ResultsEvent,
  type RunFinishedEvent,
} from '../results/results.events.js';
import { ResultsService } from '../results/results.service.js';
import { STABILITY_EVENT, type StabilityEvent } from '../stability/stability.events.js';
import { NOTIFY, type NotifyEvent, type OwedEvent, WEBHOOKS_QUEUED } from './notification.events.js';
import { fitPayload, signatureLabel } from './payload.js';
import { type PendingEvent, PendingRepository, type PendingScope } from './pending.repository.js';
import { SubscriptionsRepository } from './subscriptions.repository.js';
import { WebhooksRepository } from './webhooks.repository.js';

/**
 * What a feature adds to a run's finish when it is announced (triage: `failure.new`), read then from what the run's
 * writes committed; undefined when the run gives it nothing to say.
 */
export type FinishNotice = (run: RunDto) => Promise<NotifyEvent | undefined>;

/**
 * Who announces owed events: the replica that committed a change, right after it (`change`); the replica that
 * finished a run, its gate stored (`finish`: waits for a claim another replica's announcement holds on the run's
 * rows); the sweep of what is past its grace period (`sweep`).
 */
export type Announcer = 'change' | 'finish' | 'sweep';

/**
 * The one way into notifications for every feature. A change owes its events durably: `owe(event, tx)` writes one
 * compact row (pending_notifications) in the change's own transaction, and right after the commit `announce` turns
 * it into the event's deliveries (one per subscribed active webhook) and its members' mail, and deletes it, in one
 * transaction. A replica that dies between the two leaves the row, which the sweep of any replica announces once
 * SVC_NOTIFY_GRACE has passed (PendingSweeper). `enqueue(event, tx)` writes the deliveries and mail in the caller's
 * transaction directly, and the NOTIFY domain event does the same right after the emitter's commit (not durable
 * across a crash in between). All of them are idempotent by the event's key. The senders of every replica take it
 * from there (WebhookSenderService, the mail outbox's sender); nothing here waits for a receiver.
 */
@Injectable()
export class NotificationOutbox {
  private readonly logger = new Logger('Notifications');
  private readonly finishNotices: FinishNotice[] = [];

  constructor(
    private readonly webhooks: WebhooksRepository,
    private readonly subscriptions: SubscriptionsRepository,
    private readonly pending: PendingRepository,
    private readonly mail: MailService,
    private readonly config: AppConfig,
    private readonly events: EventEmitter2,
    private readonly results: ResultsService,
  ) {}

  /**
   * Records in the caller's transaction that the change owes `event`: one row, no webhook or member looked at, so
   * that it costs the write path one INSERT. Announce it after the commit (`announce`), else the sweep does.
   */
  async owe(event: OwedEvent, tx: EntityManager): Promise<void> {
    await this.pending.owe(tx, {
      projectId: event.projectId,
      type: event.type,
      key: event.key ?? `${event.type}:${event.runId ?? ''}`,
      runId: event.runId ?? null,
      testId: event.testId ?? null,
      data: event.data ?? null,
    });
  }

  /**
   * Another feature's part of a run's finish announcement (see FinishNotice); features register theirs when they
   * start (`onModuleInit`), so that notifications does not depend on them.
   */
  addFinishNotice(notice: FinishNotice): void {
    this.finishNotices.push(notice);
  }

  /**
   * Announces the owed events in `scope` that no other transaction holds (`by` 'finish': once it is done, see
   * PendingRepository.claim): each composed from what is committed now,
   * its deliveries and mail stored and its row deleted, in one transaction. A run's finish waits for its gate (its
   * run.finished carries it, and a FAILED one owes run.failed): until the gate is evaluated it stays owed, and the
   * sweep (`by` 'sweep'), finding it still so, has what derives from the finished run done again first. Never
   * throws: what it could not announce stays owed, for the sweep. Answers how many owed events it announced, or null
   * when it failed.
   */
  announce(scope: PendingScope, by: Announcer = 'change'): Promise<number | null> {
    // One at a time in a replica: an announcement holds a connection for its transaction and reads what it composes
    // with another, so a write that turned 30 tests flaky, announced side by side, took every connection of the
    // pool and waited for one more (each request then failed after the pool's 10 s). In turn, it takes two at most.
    // The sweep (one pass at a time already) does not queue behind an announcement waiting on a lock.
    if (by === 'sweep') {
      return this.announceNow(scope, by);
    }
    const mine = this.turn.then(() => this.announceNow(scope, by));
    this.turn = mine;
    return mine;
  }

  /** Announcements of this replica, each after the one before (see announce; announceNow never rejects). */
  private turn: Promise<unknown> = Promise.resolve();

  private async announceNow(scope: PendingScope, by: Announcer): Promise<number | null> {
    const sweeping = by === 'sweep';
    try {
      const { done, added } = await this.pending.transaction(async (tx) => {
        const owed = await this.pending.claim(tx, scope, by === 'finish');
        const done: string[] = [];
        let added = 0;
        for (const row of owed) {
          const events = await this.compose(row, sweeping);
          if (!events) {
            continue;
          }
          for (const event of events) {
            added += await this.write(event, tx);
          }
          done.push(row.id);
        }
        await this.pending.remove(tx, done);
        return { done: done.length, added };
      });
      if (added) {
        this.events.emit(WEBHOOKS_QUEUED);
      }
      return done;
    } catch (error) {
      this.logger.error(
        `Owed events of ${JSON.stringify(scope)} were not announced (left for the sweep): ${(error as Error).message}`,
      );
      return null;
    }
  }

  /** Stores the event's deliveries and mail; answers the number of webhook deliveries added. */
  async enqueue(event: NotifyEvent, tx?: EntityManager): Promise<number> {
    const added = tx
      ? await this.write(event, tx)
      : await this.webhooks.transaction((m) => this.write(event, m));
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

  /**
   * Every finished run, right after its commit and its gate's evaluation (V1 finish, V2 finish message, an import):
   * what its finish owes (run.finished, and failure.new and run.failed when the gate did not announce them first).
   */
  @OnEvent(RESULTS_EVENT, { async: true, promisify: true })
  async onResults(event: ResultsEvent): Promise<void> {
    if (event.event === 'run.finished') {
      // A second finish of the run on another replica may hold its owed row (see PendingRepository.claim): waited for.
      await this.announce({ runId: event.runId }, 'finish');
    }
  }

  /** A test that turned flaky or was quarantined (by its results or by a person), right after that committed. */
  @OnEvent(STABILITY_EVENT, { async: true, promisify: true })
  async onStability(event: StabilityEvent): Promise<void> {
    if (event.event === 'test.flaky' || event.event === 'test.quarantined') {
      await this.announce({ testId: event.testId });
    }
  }

  /**
   * An owed event as its deliveries say it, read now: none when what it is about is gone (deleted meanwhile), and
   * undefined for a run's finish whose gate is not evaluated yet (left owed; see announce).
   */
  private async compose(row: PendingEvent, sweeping: boolean): Promise<NotifyEvent[] | undefined> {
    const base = { type: row.type, projectId: row.projectId, key: row.key };
    if (row.type === 'test.flaky' || row.type === 'test.quarantined') {
      const test = await gone(() => this.results.getTest(row.projectId, row.testId!));
      if (!test) {
        return [];
      }
      // The test as the API shows it (its state, flake rate, quarantine) and a link to its history.
      return [
        {
          ...base,
          data: {
            ...row.data,
            test,
            runId: row.runId ? Number(row.runId) : null,
            url: `${this.config.http.baseUrl}/projects/${row.projectId}/tests/${row.testId}`,
          },
        },
      ];
    }
    if (!row.runId) {
      return [{ ...base, data: row.data ?? {} }];
    }
    let run = await gone(() => this.results.getRun(row.runId!));
    if (!run) {
      return [];
    }
    if (row.type !== 'run.finished') {
      return [{ ...base, runId: row.runId, data: { ...row.data, run } }];
    }
    if (run.status === 'FINISHED' && run.gate.status === 'PENDING') {
      if (!sweeping) {
        // The replica that finished the run is evaluating its gate (a second finish call, on another replica,
        // got here first), and announces it then.
        return undefined;
      }
      // Its replica died before the gate was evaluated (or the evaluation failed): what derives from a finished
      // run is done again (its listeners are idempotent and never throw), so that run.finished carries the gate
      // and a FAILED one owes run.failed. Still PENDING after that, it is announced as it is.
      await this.events.emitAsync(RUN_FINISHED_EVENT, {
        projectId: row.projectId,
        runId: row.runId,
      } satisfies RunFinishedEvent);
      run = (await gone(() => this.results.getRun(row.runId!))) ?? run;
    }
    const events: NotifyEvent[] = [{ ...base, runId: row.runId, data: { ...row.data, run } }];
    for (const notice of this.finishNotices) {
      const event = await notice(run);
      if (event) {
        events.push(event);
      }
    }
    return events;
  }

  /** The event's deliveries and mail in `tx`: how many deliveries were added. */
  private async write(event: NotifyEvent, tx: EntityManager): Promise<number> {
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
    const added = await this.webhooks.enqueue(tx, {
      projectId: event.projectId,
      event: event.type,
      key,
      payload,
    });
    if (event.runId && (event.type === 'run.failed' || event.type === 'failure.new')) {
      await this.queueMail(tx, event as NotifyEvent & { runId: string });
    }
    return added;
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

/** What `read` answers, or undefined when it is not found (a 404: deleted meanwhile). */
async function gone<T>(read: () => Promise<T>): Promise<T | undefined> {
  try {
    return await read();
  } catch (error) {
    if (error instanceof AppError && error.code === ErrorCode.NOT_FOUND) {
      return undefined;
    }
    throw error;
  }
}
