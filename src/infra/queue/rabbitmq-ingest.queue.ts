import { hostname } from 'node:os';
import { Logger } from '@nestjs/common';
import type { Channel, ChannelModel, ConfirmChannel, ConsumeMessage } from 'amqplib';
import { AmqpLink } from './amqp-link.js';
import { ATTEMPTS_HEADER, Backoff, describeMessage, errorText, runBatch } from './batch-runner.js';
import {
  BatchHandler,
  ConsumeOptions,
  decodeMessage,
  encodeMessage,
  IngestMessage,
  IngestQueue,
  OutgoingMessage,
} from './ingest-queue.js';

export interface RabbitMqIngestQueueOptions {
  url: string;
  /** The durable work queue; its dead-letter queue is `<queue>.dead`. */
  queue: string;
  connectionName?: string;
  connectTimeoutMs?: number;
  confirmTimeoutMs?: number;
  minReconnectDelayMs?: number;
  maxReconnectDelayMs?: number;
  /**
   * How long the first message of a partial batch waits for company while another batch is being handled.
   * With none in hand it waits 1 ms only (the deliveries of one socket read): an idle consumer starts at once.
   */
  batchWindowMs?: number;
}

/** An idle consumer's window: the deliveries parsed from one socket read join one batch. */
const IDLE_WINDOW_MS = 1;

interface Delivery {
  channel: Channel;
  raw: ConsumeMessage;
  /** undefined when the body is not a JSON object: such a message goes straight to the dead-letter queue. */
  message?: IngestMessage;
  attempts: number;
  arrivedAt: number;
}

const noop = (): void => undefined;

/**
 * The V2 queue on RabbitMQ: a durable queue of persistent JSON messages, published on a confirm channel (a
 * 202 is sent after the broker's ack). Each replica consumes with a prefetch of two batches, hands batches
 * to the handler, and acks only after the handler resolved (its transaction committed). A message that fails
 * on its own is republished with `x-attempts + 1` and the original acked (copy first, so a crash in between
 * duplicates rather than loses it); past maxAttempts the copy goes to `<queue>.dead` instead.
 */
export class RabbitMqIngestQueue extends IngestQueue {
  readonly kind = 'rabbitmq' as const;
  readonly deadLetterQueue: string;
  private readonly logger = new Logger('IngestQueue');
  private readonly link: AmqpLink;
  private readonly batchWindowMs: number;
  private readonly pauseBackoff = new Backoff(250, 30_000);
  private consumer?: { handler: BatchHandler; options: ConsumeOptions };
  private consumerModel?: ChannelModel;
  private consumerChannel?: { channel: Channel; tag: string };
  private pending: Delivery[] = [];
  private flushTimer?: NodeJS.Timeout;
  /** Batches being handled (at most `concurrency`). */
  private readonly running = new Set<Promise<void>>();
  private pausedUntil = 0;
  private stopping = false;
  private deadCount = 0;

  constructor(private readonly options: RabbitMqIngestQueueOptions) {
    super();
    this.deadLetterQueue = `${options.queue}.dead`;
    this.batchWindowMs = options.batchWindowMs ?? 50;
    this.link = new AmqpLink(
      {
        url: options.url,
        connectionName: options.connectionName ?? `tms-ingest@${hostname()} ${options.queue}`,
        connectTimeoutMs: options.connectTimeoutMs ?? 5_000,
        confirmTimeoutMs: options.confirmTimeoutMs ?? 10_000,
        minReconnectDelayMs: options.minReconnectDelayMs ?? 500,
        maxReconnectDelayMs: options.maxReconnectDelayMs ?? 10_000,
      },
      (model, publisher) => this.setup(model, publisher),
      () => this.connectionLost(),
    );
  }

  /** Waits for the first connection attempt (≤ connect timeout); a broker that is down is retried in the background. */
  start(): Promise<void> {
    return this.link.start();
  }

  publish(message: OutgoingMessage): Promise<void> {
    return this.link.send(this.options.queue, encodeMessage(message), {
      contentType: 'application/json',
      headers: { [ATTEMPTS_HEADER]: 0 },
    });
  }

  async consume(handler: BatchHandler, options: ConsumeOptions): Promise<void> {
    if (this.consumer) {
      throw new Error('This ingest queue already has a consumer');
    }
    this.consumer = { handler, options };
    const model = this.link.current;
    if (model) {
      await this.startConsumer(model).catch((error: unknown) =>
        this.link.fail(model, `consumer failed: ${errorText(error)}`),
      );
    }
    // Otherwise the consumer starts with the next connection (setup).
  }

  isReady(): Promise<boolean> {
    return Promise.resolve(this.link.ready);
  }

  deadLettered(): number {
    return this.deadCount;
  }

  /** The queue's ready messages, asked on a channel of its own (a failed check closes its channel). */
  async depth(): Promise<number> {
    const model = this.link.current;
    if (!model) {
      return Number.NaN;
    }
    try {
      const channel = await model.createChannel();
      try {
        return (await channel.checkQueue(this.options.queue)).messageCount;
      } finally {
        await channel.close().catch(() => undefined);
      }
    } catch {
      return Number.NaN;
    }
  }

  /** Stops taking messages, lets the batch in hand finish (and be acked), then closes the connection. */
  async close(): Promise<void> {
    this.stopping = true;
    clearTimeout(this.flushTimer);
    const consumer = this.consumerChannel;
    if (consumer) {
      await within(
        Promise.resolve().then(() => consumer.channel.cancel(consumer.tag)),
        2_000,
      ).catch(noop);
    }
    // Unacked messages not yet handed to the handler return to the queue when the channel closes.
    this.pending = [];
    await Promise.all(this.running);
    if (consumer) {
      // Closing the channel first flushes its acks: frames of one channel stay in order, whereas a connection
      // close may overtake acks still queued in amqplib's multiplexer (the broker would then redeliver them).
      await within(
        Promise.resolve().then(() => consumer.channel.close()),
        2_000,
      ).catch(noop);
    }
    await this.link.close();
  }

  private async setup(model: ChannelModel, publisher: ConfirmChannel): Promise<void> {
    await publisher.assertQueue(this.options.queue, { durable: true });
    await publisher.assertQueue(this.deadLetterQueue, { durable: true });
    await this.startConsumer(model);
  }

  private async startConsumer(model: ChannelModel): Promise<void> {
    if (!this.consumer || this.stopping || this.consumerModel === model) {
      return; // idempotent: setup and consume() may both get here for one connection
    }
    this.consumerModel = model;
    const channel = await model.createChannel();
    channel.on('error', (err: Error) =>
      this.logger.warn(`Message broker consumer channel error: ${errorText(err)}`),
    );
    channel.on('close', () => {
      if (!this.stopping) {
        this.link.fail(model, 'consumer channel closed');
      }
    });
    // One batch more than are handled at once: the next one is already buffered.
    const { batchSize, concurrency = 1 } = this.consumer.options;
    await channel.prefetch(batchSize * (Math.max(1, concurrency) + 1));
    const { consumerTag } = await channel.consume(
      this.options.queue,
      (raw) =>
        raw ? this.receive(channel, raw) : this.link.fail(model, 'the broker cancelled the consumer'),
      { noAck: false },
    );
    this.consumerChannel = { channel, tag: consumerTag };
  }

  private connectionLost(): void {
    // Their delivery tags died with the channel; the broker redelivers them.
    this.pending = [];
    this.consumerModel = undefined;
    this.consumerChannel = undefined;
  }

  private receive(channel: Channel, raw: ConsumeMessage): void {
    const attempts = Number(raw.properties.headers?.[ATTEMPTS_HEADER] ?? 0);
    this.pending.push({
      channel,
      raw,
      message: decodeMessage(raw.content.toString('utf8')),
      attempts: Number.isFinite(attempts) ? attempts : 0,
      arrivedAt: Date.now(),
    });
    this.schedule();
  }

  /**
   * Up to `concurrency` batches at a time: a full batch goes at once, a partial one after the batch window (1 ms
   * when no batch is in hand), none while paused.
   */
  private schedule(): void {
    clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    if (!this.consumer || this.stopping || !this.pending.length) {
      return;
    }
    const { batchSize, concurrency = 1 } = this.consumer.options;
    if (this.running.size >= Math.max(1, concurrency)) {
      return;
    }
    const full = this.pending.length >= batchSize;
    const window = this.running.size ? this.batchWindowMs : Math.min(this.batchWindowMs, IDLE_WINDOW_MS);
    const wait = Math.max(this.pausedUntil, full ? 0 : this.pending[0].arrivedAt + window) - Date.now();
    if (wait > 0) {
      this.flushTimer = setTimeout(() => this.schedule(), wait);
      return;
    }
    const batch = this.pending.splice(0, batchSize);
    const running: Promise<void> = this.process(batch)
      .catch((error: unknown) => this.logger.error(`Ingest batch failed unexpectedly: ${errorText(error)}`))
      .finally(() => {
        this.running.delete(running);
        this.schedule();
      });
    this.running.add(running);
    // Another batch may go at once, if there is one and room for it.
    this.schedule();
  }

  private async process(batch: Delivery[]): Promise<void> {
    const { handler, options } = this.consumer!;
    const readable = batch.filter((d) => d.message);
    for (const unreadable of batch.filter((d) => !d.message)) {
      await this.moveOn(unreadable, new Error('the body is not a JSON object'), true);
    }
    const outcome = await runBatch(readable, (d) => d.message!, handler);
    outcome.done.forEach((d) => settle(d, 'ack'));
    for (const { item, error } of outcome.failed) {
      await this.moveOn(item, error, item.attempts + 1 >= options.maxAttempts);
    }
    outcome.retryLater.forEach((d) => settle(d, 'requeue'));
    if (outcome.transient) {
      const delay = this.pauseBackoff.next();
      this.pausedUntil = Date.now() + delay;
      this.logger.warn(
        `Ingest paused for ${delay} ms after a transient failure: ${errorText(outcome.transient)}`,
      );
    } else {
      this.pauseBackoff.reset();
      this.pausedUntil = 0;
    }
  }

  /** Republishes a failed message with one more attempt counted, or to the dead-letter queue; then acks the original. */
  private async moveOn(d: Delivery, error: unknown, dead: boolean): Promise<void> {
    const attempts = d.attempts + 1;
    const headers: Record<string, unknown> = { ...d.raw.properties.headers, [ATTEMPTS_HEADER]: attempts };
    if (dead) {
      headers['x-last-error'] = errorText(error);
    }
    try {
      await this.link.send(dead ? this.deadLetterQueue : this.options.queue, d.raw.content, {
        contentType: d.raw.properties.contentType as string | undefined,
        headers,
      });
    } catch {
      // Not moved: give it back untouched; the broker redelivers it (here or to another replica).
      settle(d, 'requeue');
      return;
    }
    settle(d, 'ack');
    if (dead) {
      this.deadCount += 1;
      this.logger.warn(
        `Moved a ${describeMessage(d.message)} to ${this.deadLetterQueue} after ${attempts} attempt(s): ${errorText(error, 200)}`,
      );
    }
  }
}

/** Acks or requeues on the delivery's own channel; a channel that died meanwhile has already given it back. */
function settle(d: Delivery, how: 'ack' | 'requeue'): void {
  try {
    if (how === 'ack') {
      d.channel.ack(d.raw);
    } else {
      d.channel.nack(d.raw, false, true);
    }
  } catch {
    // IllegalOperationError: channel closed; the broker requeued the message when it noticed.
  }
}

function within<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
