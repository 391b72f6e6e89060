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
 * How other features hand notifications an event. Durably, in the transaction of the change that causes it: inject
 * NotificationOutbox and call `owe(event, tx)`, then, after the commit, `announce` (a run's or a test's owed events);
 * what a replica that died in between did not announce, any replica's sweep does (SVC_NOTIFY_GRACE). After the
 * commit, not durable across a crash right after it: emit this domain event (`events.emit(NOTIFY, event)`), which
 * the notifications module writes to the delivery outbox (and queues the members' mail) right away; or call
 * `enqueue(event, tx)` to write the deliveries themselves in a transaction. Either way the event's `key` makes it
 * idempotent: the same key enqueued twice (a retried request, two replicas reacting to one change, a sweep after a
 * replica that got there after all) is delivered once to each webhook and mailed once to each member.
 *
 * What each type's `data` holds:
 * - `run.finished`: `{ run }` (the run shape); owed by every run's finish (the results observer of notifications,
 *   in the transaction that finishes the run) and announced once its gate is evaluated.
 * - `run.failed`: `{ run, gate }` (`gate`: the run's gate, `{ status: 'FAILED', conditions }`); `runId` set. Owed
 *   by the gate's evaluation that stored FAILED. Mails `run-failed` to the members who asked for it.
 * - `failure.new`: `{ run, signatures: [...] }`, every new signature of the run (the outbox keeps the first 100
 *   and adds `count`); `runId` set. Announced with the run's finish (triage's FinishNotice). Mails `new-failures`.
 * - `test.flaky`, `test.quarantined`: `{ test }` (and whatever else says why); `key` names the test and the change,
 *   e.g. `test.flaky:1234:run:5678`. Owed by test health in the write (or the person's change) that made it so.
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

/**
 * An event a change owes (NotificationOutbox.owe): what it is about; the rest of its `data` (the run, the test as
 * they are then) is read when it is announced. `data` holds only what the change alone knew (a gate's verdict).
 */
export interface OwedEvent {
  type: Exclude<NotificationType, 'ping'>;
  projectId: string;
  runId?: string;
  testId?: string;
  /** Idempotency key within the project; default `${type}:${runId}`. */
  key?: string;
  data?: Record<string, unknown>;
}

/** Emitted after deliveries were stored: the local sender looks at once instead of at its next poll. */
export const WEBHOOKS_QUEUED = 'notifications.webhooks-queued';
