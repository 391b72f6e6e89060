import { Logger } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { AppError } from '../../common/app-error.js';
import { isDataException } from '../../common/db-errors.js';
import { Backoff, describeMessage, errorText, runBatch, unavailable } from './batch-runner.js';
import {
  BatchHandler,
  ConsumeOptions,
  decodeMessage,
  encodeMessage,
  IngestMessage,
  IngestQueue,
  OutgoingMessage,
} from './ingest-queue.js';

export interface PostgresIngestQueueOptions {
  /** How long a claimed row stays invisible to other consumers: a crashed replica's rows come back after it. */
  leaseSeconds?: number;
  /** Pause between polls when the queue had less than a full batch. */
  idlePollMs?: number;
}

interface Row {
  id: string;
  /** The message as JSON text (see encodeMessage): parsed here, not by the driver, as `text` is not json. */
  payload: string;
  attempts: number;
}

interface Claimed {
  id: string;
  message: IngestMessage;
}

// One statement, so one short transaction: take the oldest visible rows no other consumer holds and lease
// them. SKIP LOCKED lets consumers in every replica claim disjoint rows without waiting for each other.
const CLAIM = `
  WITH claimed AS (
    UPDATE ingest_queue q SET available_at = now() + make_interval(secs => $2)
    FROM (
      SELECT id FROM ingest_queue
      WHERE dead_at IS NULL AND available_at <= now()
      ORDER BY id LIMIT $1
      FOR UPDATE SKIP LOCKED
    ) next
    WHERE q.id = next.id
    RETURNING q.id, q.payload, q.attempts
  )
  SELECT id, payload, attempts FROM claimed ORDER BY id`;

// `attempts` on the right-hand side is the value before this update.
const FAIL = `
  WITH failed AS (
    UPDATE ingest_queue
    SET attempts = attempts + 1, last_error = $2, available_at = now(),
        dead_at = CASE WHEN attempts + 1 >= $3 THEN now() END
    WHERE id = $1
    RETURNING attempts, dead_at
  )
  SELECT attempts, dead_at IS NOT NULL AS dead FROM failed`;

/**
 * The embedded V2 queue: a PostgreSQL table, so a 202 still means stored (the INSERT committed). Consumers
 * poll it: claim a batch by leasing rows, run the handler (which opens its own transaction), delete the rows
 * once it resolved. A crash between commit and delete redelivers the batch after the lease; handlers are
 * idempotent, so that changes nothing. Dead rows stay in the table with dead_at set, for inspection or a
 * manual `UPDATE ingest_queue SET dead_at = NULL, attempts = 0`.
 */
export class PostgresIngestQueue extends IngestQueue {
  readonly kind = 'postgres' as const;
  private readonly logger = new Logger('IngestQueue');
  private readonly leaseSeconds: number;
  private readonly idlePollMs: number;
  private loop?: Promise<unknown>;
  private stopping = false;
  /** Consumer loops asleep; a local publish wakes those waiting out an idle poll (not a backoff). */
  private readonly sleepers = new Set<{ wake: () => void; onPublish: boolean }>();
  /** Local publishes so far: a loop that sees it change while it worked polls again at once. */
  private published = 0;
  private deadCount = 0;

  constructor(
    private readonly db: DataSource,
    options: PostgresIngestQueueOptions = {},
  ) {
    super();
    this.leaseSeconds = options.leaseSeconds ?? 30;
    this.idlePollMs = options.idlePollMs ?? 150;
  }

  async publish(message: OutgoingMessage): Promise<void> {
    try {
      // Bytes, so the driver sends them as they are (binary format: for text, the UTF-8 bytes, which the server
      // checks as it does text).
      await this.db.query('INSERT INTO ingest_queue (payload) VALUES ($1)', [encodeMessage(message)]);
    } catch (error) {
      if (isDataException(error)) {
        // Data exception (a character text cannot hold, say): the message's fault, not the database's.
        throw AppError.validation(`The message cannot be stored: ${errorText(error, 200)}`);
      }
      this.logger.warn(`Could not queue a ${describeMessage(message)}: ${errorText(error)}`);
      throw unavailable('The ingest queue is unavailable; retry later');
    }
    // This replica's consumer takes it at once instead of at its next poll (other replicas still poll).
    this.published += 1;
    for (const sleeper of this.sleepers) {
      if (sleeper.onPublish) {
        sleeper.wake();
      }
    }
  }

  consume(handler: BatchHandler, options: ConsumeOptions): Promise<void> {
    if (this.loop) {
      return Promise.reject(new Error('This ingest queue already has a consumer'));
    }
    // Each loop claims its own rows (SKIP LOCKED), as consumers in other replicas do.
    this.loop = Promise.all(
      Array.from({ length: Math.max(1, options.concurrency ?? 1) }, () => this.run(handler, options)),
    );
    return Promise.resolve();
  }

  async isReady(): Promise<boolean> {
    if (!this.db.isInitialized) {
      return false;
    }
    try {
      await this.db.query('SELECT 1');
      return true;
    } catch {
      return false;
    }
  }

  deadLettered(): number {
    return this.deadCount;
  }

  /** By the partial index of live rows (ix_ingest_queue_live); rows being handled are claimed, still counted. */
  async depth(): Promise<number> {
    try {
      const [{ n }]: { n: string }[] = await this.db.query(
        'SELECT count(*) AS n FROM ingest_queue WHERE dead_at IS NULL',
      );
      return Number(n);
    } catch {
      return Number.NaN;
    }
  }

  /** Stops polling and waits for the batch in hand; the DataSource belongs to the caller and stays open. */
  async close(): Promise<void> {
    this.stopping = true;
    this.sleepers.forEach((sleeper) => sleeper.wake());
    await this.loop;
  }

  private async run(handler: BatchHandler, options: ConsumeOptions): Promise<void> {
    const backoff = new Backoff(250, 30_000);
    while (!this.stopping) {
      let pause: number;
      let idlePoll = false;
      const published = this.published;
      try {
        const { taken, transient } = await this.tick(handler, options);
        idlePoll = !transient && taken < options.batchSize;
        pause = transient ? backoff.next() : idlePoll && this.published === published ? this.idlePollMs : 0;
        if (!transient) {
          backoff.reset();
        }
      } catch (error) {
        // Claiming or settling failed: the database is away. Leased rows come back when their lease ends.
        pause = backoff.next();
        this.logger.warn(`Ingest queue poll failed; retrying in ${pause} ms: ${errorText(error)}`);
      }
      if (pause > 0) {
        await this.idle(pause, idlePoll);
      }
    }
  }

  private async tick(
    handler: BatchHandler,
    options: ConsumeOptions,
  ): Promise<{ taken: number; transient: boolean }> {
    const rows = await this.db.query<Row[]>(CLAIM, [options.batchSize, this.leaseSeconds]);
    if (!rows.length) {
      return { taken: 0, transient: false };
    }
    const claimed: Claimed[] = [];
    for (const row of rows) {
      const message = decodeMessage(row.payload);
      if (message) {
        claimed.push({ id: row.id, message });
      } else {
        // It can never succeed: dead at once (one attempt), as RabbitMQ's consumer does with such a body.
        await this.fail(row.id, new Error('the payload is not a JSON message'), 1);
      }
    }
    const outcome = await runBatch(claimed, (item) => item.message, handler);
    if (outcome.done.length) {
      await this.db.query('DELETE FROM ingest_queue WHERE id = ANY($1::bigint[])', [
        outcome.done.map((r) => r.id),
      ]);
    }
    for (const { item, error } of outcome.failed) {
      await this.fail(item.id, error, options.maxAttempts, item.message);
    }
    if (outcome.transient) {
      this.logger.warn(`Ingest paused after a transient failure: ${errorText(outcome.transient)}`);
      // Give the rows back now rather than after the lease; if even this fails, the lease ends anyway.
      await this.db
        .query('UPDATE ingest_queue SET available_at = now() WHERE id = ANY($1::bigint[])', [
          outcome.retryLater.map((r) => r.id),
        ])
        .catch(() => undefined);
    }
    return { taken: rows.length, transient: !!outcome.transient };
  }

  /** Counts a failed attempt of one row, which becomes dead at `maxAttempts`. */
  private async fail(
    id: string,
    error: unknown,
    maxAttempts: number,
    message?: IngestMessage,
  ): Promise<void> {
    const [result] = await this.db.query<{ attempts: number; dead: boolean }[]>(FAIL, [
      id,
      errorText(error),
      maxAttempts,
    ]);
    if (result?.dead) {
      this.deadCount += 1;
      this.logger.warn(
        `Moved a ${describeMessage(message)} to the dead rows of ingest_queue after ${result.attempts} attempt(s): ${errorText(error, 200)}`,
      );
    }
  }

  /** Sleeps, but wakes at once for close(), and for a local publish when `onPublish`. */
  private idle(ms: number, onPublish: boolean): Promise<void> {
    return new Promise((resolve) => {
      const sleeper = {
        onPublish,
        wake: () => {
          clearTimeout(timer);
          this.sleepers.delete(sleeper);
          resolve();
        },
      };
      const timer = setTimeout(sleeper.wake, ms);
      this.sleepers.add(sleeper);
    });
  }
}
