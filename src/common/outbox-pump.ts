import type { Logger } from '@nestjs/common';

/** What an outbox's sender does with its rows; the pump decides when. */
export interface OutboxWork<T> {
  /** Names the sender in the log ("Mail sender: …"). */
  name: string;
  logger: Logger;
  /** How often to look for due rows (rows this replica queues are sent at once, through `wake`). */
  pollMs: number;
  /** Claims the next due rows (FOR UPDATE SKIP LOCKED, with a lease): none when nothing is due for this replica. */
  claim(): Promise<T[]>;
  /** Sends one claimed row and records its outcome; never throws for a failed send. */
  send(row: T): Promise<void>;
  /** Removes old finished records; runs every `pruneEveryMs`, its failures its own to log. */
  prune(): Promise<void>;
  pruneEveryMs: number;
}

/**
 * Drives a durable outbox's background sender in one replica (the mail outbox, the webhook deliveries): claims due
 * rows and sends them, batch after batch, until none is left; woken at once by this replica's own new rows and
 * every `pollMs` for the others'. One drain at a time: a wake during one runs another right after it, so a row
 * queued meanwhile is not left for the next poll. `stop` lets the batch in hand finish.
 */
export class OutboxPump<T> {
  private timer?: NodeJS.Timeout;
  private pruner?: NodeJS.Timeout;
  private running?: Promise<void>;
  private again = false;
  private stopped = false;

  constructor(private readonly work: OutboxWork<T>) {}

  start(): void {
    this.timer = setInterval(() => this.wake(), this.work.pollMs);
    this.timer.unref();
    this.pruner = setInterval(() => void this.work.prune(), this.work.pruneEveryMs);
    this.pruner.unref();
    this.wake();
  }

  wake(): void {
    if (this.stopped) {
      return;
    }
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.drain()
      .catch((error: Error) => this.work.logger.error(`${this.work.name}: ${error.message}`, error.stack))
      .finally(() => {
        this.running = undefined;
        if (this.again && !this.stopped) {
          this.again = false;
          this.wake();
        }
      });
  }

  /** Stops polling and waits for the drain in progress (its batch in hand) to end. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    clearInterval(this.pruner);
    await this.running;
  }

  /** Sends due rows until none is left for this replica. */
  private async drain(): Promise<void> {
    for (;;) {
      this.again = false;
      const batch = await this.work.claim();
      if (!batch.length) {
        return;
      }
      await Promise.all(batch.map((row) => this.work.send(row)));
      if (this.stopped) {
        return;
      }
    }
  }
}
