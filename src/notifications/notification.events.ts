/**
 * The events webhooks subscribe to (API.md, "Notifications: webhooks and mail"). `ping` is what POST
 * /api/webhooks/{id}/test sends; a webhook may list it too.
 */
export const NOTIFICATION_TYPES = [
  'run.finished',
  'run.failed',
  'failure.new',
  'test.flaky',
  'test.quarantined',
  'ping',
] as const;

export type NotificationType = (typeof NOTIFICATION_TYPES)[number];

/**
 * A domain event other features emit after their change committed (`events.emit(NOTIFY, event)`): the
 * notifications module writes it durably to the delivery outbox (and queues the members' mail) right away.
 * To enqueue inside the transaction of the change instead, inject NotificationOutbox and call
 * `enqueue(event, tx)`. Either way the event's `key` makes it idempotent: the same key enqueued twice (a retried
 * request, two replicas reacting to one change) is delivered once to each webhook and mailed once to each member.
 *
 * What each type's `data` holds:
 * - `run.finished`: `{ run }` (the run shape); sent by this module itself when a run finishes.
 * - `run.failed`: `{ run, gate }` (`gate`: the run's gate, `{ status: 'FAILED', conditions }`); `runId` set. Mails
 *   `run-failed` to the members who asked for it.
 * - `failure.new`: `{ run, signatures: [...] }`, every new signature of the run (the outbox keeps the first 100
 *   and adds `count`); `runId` set. Mails `new-failures`.
 * - `test.flaky`, `test.quarantined`: `{ test }` (and whatever else says why); `key` names the test and the change,
 *   e.g. `test.flaky:1234:2026-11-26T10:00:00Z`.
 */
export const NOTIFY = 'notifications.notify';

export interface NotifyEvent {
  type: Exclude<NotificationType, 'ping'>;
  projectId: string;
  /** The run the event is about, if any: mails are at most one of each kind per run and member. */
  runId?: string;
  /** Idempotency key within the project; default `${type}:${runId}`. */
  key?: string;
  data: Record<string, unknown>;
}

/** Emitted after deliveries were stored: the local sender looks at once instead of at its next poll. */
export const WEBHOOKS_QUEUED = 'notifications.webhooks-queued';
