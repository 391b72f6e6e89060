import { AppError, ErrorCode } from '../../common/app-error.js';
import { isTransactionConflict } from '../../common/db-errors.js';
import { isDatabaseAway } from '../../common/outages.js';
import type { BatchHandler, IngestMessage } from './ingest-queue.js';

/** Header (RabbitMQ) / column (PostgreSQL) meaning: how many times the message failed on its own. */
export const ATTEMPTS_HEADER = 'x-attempts';

/** What became of one batch; the adapter settles each group (ack/delete, count an attempt, give back). */
export interface BatchOutcome<T> {
  /** Handled and committed: acknowledge or delete. */
  done: T[];
  /** Failed on their own: count an attempt, and dead-letter past maxAttempts. */
  failed: { item: T; error: unknown }[];
  /** Not tried, or stopped by an infrastructure failure: give back without counting an attempt. */
  retryLater: T[];
  /** The infrastructure failure (database down, deadlock...), when there was one: the consumer should pause. */
  transient?: unknown;
}

/**
 * Runs the whole batch in one handler call (one transaction); when that fails, runs each message alone so a
 * single bad message cannot hold the others back. A transient failure (the database is unreachable, a
 * deadlock) says nothing about the messages, so it never counts as an attempt: otherwise a database outage
 * would push every queued message to the dead-letter queue within seconds.
 */
export async function runBatch<T>(
  items: T[],
  messageOf: (item: T) => IngestMessage,
  handler: BatchHandler,
): Promise<BatchOutcome<T>> {
  const outcome: BatchOutcome<T> = { done: [], failed: [], retryLater: [] };
  if (!items.length) {
    return outcome;
  }
  try {
    await handler(items.map(messageOf));
    outcome.done = items;
    return outcome;
  } catch (error) {
    if (isTransient(error)) {
      return { ...outcome, retryLater: items, transient: error };
    }
    if (items.length === 1) {
      outcome.failed.push({ item: items[0], error });
      return outcome;
    }
  }
  for (const item of items) {
    if (outcome.transient) {
      outcome.retryLater.push(item);
      continue;
    }
    try {
      await handler([messageOf(item)]);
      outcome.done.push(item);
    } catch (error) {
      if (isTransient(error)) {
        outcome.transient = error;
        outcome.retryLater.push(item);
      } else {
        outcome.failed.push({ item, error });
      }
    }
  }
  return outcome;
}

/**
 * Whether a handler failure is the infrastructure's (retry later, uncounted) rather than the message's: a
 * dependency unavailable, the database away, or a conflict that a retry resolves.
 */
export function isTransient(error: unknown): boolean {
  if (error instanceof AppError) {
    return error.code === ErrorCode.UNAVAILABLE;
  }
  // A deadlock, a serialization failure, a lock not granted in time: the data is fine, another try will do.
  return isDatabaseAway(error) || isTransactionConflict(error);
}

/** Capped exponential backoff with ±20 % jitter, so replicas do not retry in lockstep. */
export class Backoff {
  private attempt = 0;

  constructor(
    private readonly minMs: number,
    private readonly maxMs: number,
  ) {}

  next(): number {
    const base = Math.min(this.maxMs, this.minMs * 2 ** this.attempt);
    this.attempt = Math.min(this.attempt + 1, 30);
    return Math.min(this.maxMs, Math.round(base * (0.8 + Math.random() * 0.4)));
  }

  reset(): void {
    this.attempt = 0;
  }
}

/** Identifies a message in logs without its content (names, messages and traces may be sensitive). */
export function describeMessage(message: unknown): string {
  const m = message as { kind?: unknown; projectId?: unknown } | null;
  const kind = typeof m?.kind === 'string' ? m.kind : 'unreadable';
  const project =
    typeof m?.projectId === 'string' || typeof m?.projectId === 'number' ? String(m.projectId) : '?';
  return `${kind} message of project ${project}`;
}

/** A failure's text, bounded for a log line, a header or a column. */
export function errorText(error: unknown, max = 500): string {
  // Duck-typed rather than instanceof: errors may come from another realm (vm contexts, worker threads).
  const e = error as { name?: unknown; message?: unknown } | null;
  const text =
    typeof e?.message === 'string'
      ? `${typeof e.name === 'string' ? e.name : 'Error'}: ${e.message}`
      : String(error);
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

export function unavailable(message: string): AppError {
  return new AppError(ErrorCode.UNAVAILABLE, message);
}
