import { randomUUID } from 'node:crypto';
import { Logger } from '@nestjs/common';
import { connect } from 'amqplib';
import type { ChannelModel, ConfirmChannel, Options } from 'amqplib';
import { Backoff, errorText, unavailable } from './batch-runner.js';

export interface AmqpLinkOptions {
  url: string;
  /** Shown in the broker's connection list (client property connection_name). */
  connectionName: string;
  connectTimeoutMs: number;
  confirmTimeoutMs: number;
  minReconnectDelayMs: number;
  maxReconnectDelayMs: number;
}

/** Runs after each (re)connection, before the link counts as ready: declare queues, start consumers. */
export type LinkSetup = (model: ChannelModel, publisher: ConfirmChannel) => Promise<void>;

const noop = (): void => undefined;

/**
 * One AMQP connection with a confirm channel, kept alive by its own reconnect loop. amqplib 2 has an opt-in
 * `recovery` mode, but it does not recover channels or consumers, and channel operations made while it is
 * reconnecting wait for the next connection, whereas a V2 write must fail at once (503) while the broker is
 * away. So the loop is ours: any 'close' of the connection or of one of its channels tears the whole
 * connection down and schedules a new one with capped exponential backoff. 'error' events are only logged
 * (an unhandled 'error' event would crash the process); the 'close' that follows them drives recovery.
 */
export class AmqpLink {
  private readonly logger = new Logger('IngestQueue');
  private readonly backoff: Backoff;
  private model?: ChannelModel;
  private publisher?: ConfirmChannel;
  private blocked = false;
  private closed = false;
  private attempt?: Promise<void>;
  private timer?: NodeJS.Timeout;
  /** messageIds the broker returned as unroutable (mandatory flag): their confirm must not count as stored. */
  private readonly returned = new Set<string>();

  constructor(
    private readonly options: AmqpLinkOptions,
    private readonly setup: LinkSetup,
    private readonly onDown: () => void,
  ) {
    this.backoff = new Backoff(options.minReconnectDelayMs, options.maxReconnectDelayMs);
  }

  /** Connected, set up and not flow-controlled: a publish can be confirmed now. */
  get ready(): boolean {
    return !!this.publisher && !this.blocked && !this.closed;
  }

  /** The open connection, even while its setup still runs. */
  get current(): ChannelModel | undefined {
    return this.model;
  }

  /** The first attempt; when it fails the loop keeps trying in the background, so this never rejects. */
  start(): Promise<void> {
    this.attempt ??= this.open().finally(() => (this.attempt = undefined));
    return this.attempt;
  }

  /** Sends a persistent message and resolves only once the broker confirmed it (stored on disk for durable queues). */
  send(queue: string, body: Buffer, options: Options.Publish = {}): Promise<void> {
    const { model, publisher } = this;
    if (!model || !publisher || !this.ready) {
      return Promise.reject(unavailable('The message broker is unavailable; retry later'));
    }
    const messageId = randomUUID();
    return new Promise<void>((resolve, reject) => {
      let settled = false;
      const settle = (error?: Error): void => {
        if (settled) {
          return;
        }
        settled = true;
        clearTimeout(timer);
        const wasReturned = this.returned.delete(messageId);
        if (error) {
          reject(error);
        } else if (wasReturned) {
          reject(unavailable(`The message broker has no queue ${queue}; retry later`));
        } else {
          resolve();
        }
      };
      const timer = setTimeout(() => {
        settle(unavailable('The message broker did not confirm the message in time; retry later'));
        // A confirm that never comes means a half-open connection: start over rather than wait for heartbeats.
        this.fail(model, 'a publish was not confirmed in time');
      }, this.options.confirmTimeoutMs);
      try {
        publisher.sendToQueue(
          queue,
          body,
          { ...options, messageId, persistent: true, mandatory: true },
          (err) =>
            settle(err ? unavailable('The message broker refused the message; retry later') : undefined),
        );
      } catch {
        // The channel closed between the readiness check and the send.
        settle(unavailable('The message broker is unavailable; retry later'));
      }
    });
  }

  /** Gives up this connection (a channel died, a consumer was cancelled...) and reconnects. */
  fail(model: ChannelModel, reason: string): void {
    if (this.model !== model) {
      return; // already replaced
    }
    this.model = undefined;
    this.publisher = undefined;
    this.blocked = false;
    this.returned.clear();
    this.onDown();
    void Promise.resolve()
      .then(() => model.close())
      .catch(noop);
    if (!this.closed) {
      this.logger.warn(`Lost the message broker (${reason}); reconnecting`);
      this.scheduleReconnect();
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    await this.attempt;
    const model = this.model;
    this.model = undefined;
    this.publisher = undefined;
    if (model) {
      await model.close().catch(noop);
    }
  }

  private async open(): Promise<void> {
    let model: ChannelModel | undefined;
    try {
      model = await connectWithin(this.options);
      const opened = model;
      opened.on('error', (err: Error) =>
        this.logger.warn(`Message broker connection error: ${errorText(err)}`),
      );
      opened.on('close', () => this.fail(opened, 'connection closed'));
      opened.on('blocked', (reason: string) => {
        this.blocked = true;
        this.logger.warn(`The message broker blocks publishing: ${reason}`);
      });
      opened.on('unblocked', () => (this.blocked = false));
      if (this.closed) {
        await opened.close().catch(noop);
        return;
      }
      this.model = opened;
      const publisher = await opened.createConfirmChannel();
      publisher.on('error', (err: Error) =>
        this.logger.warn(`Message broker channel error: ${errorText(err)}`),
      );
      publisher.on('close', () => this.fail(opened, 'publishing channel closed'));
      publisher.on('return', (msg: { properties: { messageId?: string } }) => {
        if (msg.properties.messageId) {
          this.returned.add(msg.properties.messageId);
        }
      });
      await this.setup(opened, publisher);
      if (this.model !== opened) {
        return; // lost during setup; the loop already runs
      }
      this.publisher = publisher;
      this.backoff.reset();
      this.logger.log('Connected to the message broker');
    } catch (error) {
      this.logger.warn(`Could not connect to the message broker: ${errorText(error)}`);
      if (model && this.model === model) {
        this.fail(model, 'setup failed');
      } else {
        if (model) {
          void model.close().catch(noop);
        }
        this.scheduleReconnect();
      }
    }
  }

  private scheduleReconnect(): void {
    if (this.closed || this.timer) {
      return;
    }
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.start();
    }, this.backoff.next());
  }
}

/**
 * amqplib's socket `timeout` covers the TCP and AMQP handshakes; the outer timer also bounds DNS and TLS,
 * and closes a connection that completes after we gave up on it.
 */
function connectWithin(options: AmqpLinkOptions): Promise<ChannelModel> {
  return new Promise((resolve, reject) => {
    let late = false;
    const timer = setTimeout(() => {
      late = true;
      reject(new Error(`connecting timed out after ${options.connectTimeoutMs} ms`));
    }, options.connectTimeoutMs + 500);
    connect(withHeartbeat(options.url), {
      timeout: options.connectTimeoutMs,
      clientProperties: { connection_name: options.connectionName },
    }).then(
      (model) => {
        clearTimeout(timer);
        if (late) {
          model.on('error', noop);
          void model.close().catch(noop);
        } else {
          resolve(model);
        }
      },
      (error: Error) => {
        // Passed on as is: core errors may fail `instanceof Error` across realms (vm contexts in tests).
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}

/** A 10 s heartbeat unless the URL chooses one: a silently dead broker is noticed in ~20 s, not minutes. */
function withHeartbeat(url: string): string {
  try {
    const parsed = new URL(url);
    if (!parsed.searchParams.has('heartbeat')) {
      parsed.searchParams.set('heartbeat', '10');
    }
    return parsed.toString();
  } catch {
    return url;
  }
}
