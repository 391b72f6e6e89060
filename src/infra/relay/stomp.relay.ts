import { Logger } from '@nestjs/common';
import { Client, type IMessage, ReconnectionTimeMode } from '@stomp/stompjs';
import { TCPWrapper } from '@stomp/tcp-wrapper';
import type { StompSettings } from '../../config/app-config.js';
import { LiveEvent, LiveRelay, RelayListener } from './live-relay.js';

/** First retry after a lost connection, doubling up to the cap. */
const RECONNECT_MS = 500;
const MAX_RECONNECT_MS = 15_000;
const HEARTBEAT_MS = 10_000;

function isLiveEvent(value: unknown): value is LiveEvent {
  const v = value as Partial<LiveEvent> | null;
  return (
    typeof v === 'object' &&
    v !== null &&
    typeof v.projectId === 'string' &&
    typeof v.event === 'string' &&
    typeof v.at === 'string' &&
    typeof v.data === 'object' &&
    v.data !== null
  );
}

/**
 * The relay through the broker's STOMP plugin (RabbitMQ's `rabbitmq_stomp`), with @stomp/stompjs over TCP
 * (@stomp/tcp-wrapper). Events go to the topic exchange with the routing key `<topic>.<projectId>`; each replica
 * holds one subscription to `<topic>.*` (a queue of its own that the broker deletes when it goes), so each event
 * reaches each replica once. Heart-beats both ways; after a lost connection the client reconnects with growing
 * delays, and every socket is then told to resync: events published while the relay was down are lost.
 */
export class StompRelay extends LiveRelay {
  readonly kind = 'stomp';
  private readonly log = new Logger('LiveRelay');
  private readonly client: Client;
  private listener?: RelayListener;
  private connected = false;
  private everConnected = false;
  private lostLogged = false;

  constructor(
    private readonly settings: StompSettings,
    private readonly topic: string,
  ) {
    super();
    this.client = new Client({
      webSocketFactory: () => new TCPWrapper(settings.host, settings.port),
      connectHeaders: {
        ...(settings.login !== undefined ? { login: settings.login } : {}),
        ...(settings.passcode !== undefined ? { passcode: settings.passcode } : {}),
        ...(settings.vhost !== undefined ? { host: settings.vhost } : {}),
      },
      heartbeatIncoming: HEARTBEAT_MS,
      heartbeatOutgoing: HEARTBEAT_MS,
      reconnectDelay: RECONNECT_MS,
      maxReconnectDelay: MAX_RECONNECT_MS,
      reconnectTimeMode: ReconnectionTimeMode.EXPONENTIAL,
      connectionTimeout: 5_000,
      debug: () => undefined,
      onConnect: () => this.onConnect(),
      onStompError: (frame) => {
        this.log.warn(`The broker refused the relay: ${frame.headers.message ?? frame.body}`);
      },
      onWebSocketClose: () => this.onLost(),
      onWebSocketError: () => undefined,
    });
  }

  /** Starts connecting; resolves once connected or after `waitMs` (the relay keeps trying in the background). */
  async start(waitMs = 5_000): Promise<void> {
    this.client.activate();
    const deadline = Date.now() + waitMs;
    while (!this.connected && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    if (!this.connected) {
      this.log.warn(
        `The STOMP relay at ${this.settings.host}:${this.settings.port} is not reachable yet; retrying`,
      );
    }
  }

  publish(event: LiveEvent): void {
    if (!this.connected) {
      return;
    }
    try {
      this.client.publish({
        destination: `/topic/${this.topic}.${event.projectId}`,
        body: JSON.stringify(event),
        headers: { 'content-type': 'application/json' },
      });
    } catch (error) {
      // The connection went between the check and the send: the event is lost, as while down.
      this.log.warn(`A live event was not relayed: ${(error as Error).message}`);
    }
  }

  listen(listener: RelayListener): void {
    this.listener = listener;
  }

  isReady(): boolean {
    return this.connected;
  }

  async close(): Promise<void> {
    this.listener = undefined;
    await this.client.deactivate();
  }

  private onConnect(): void {
    this.client.subscribe(`/topic/${this.topic}.*`, (message) => this.onMessage(message));
    this.connected = true;
    if (this.everConnected) {
      this.log.log('The STOMP relay is back: clients are told to resync');
      this.listener?.resync();
    }
    this.everConnected = true;
    this.lostLogged = false;
  }

  private onLost(): void {
    this.connected = false;
    if (this.everConnected && !this.lostLogged) {
      this.lostLogged = true;
      this.log.warn('The STOMP relay lost its broker connection; reconnecting');
    }
  }

  private onMessage(message: IMessage): void {
    let event: unknown;
    try {
      event = JSON.parse(message.body);
    } catch {
      return;
    }
    if (isLiveEvent(event)) {
      this.listener?.event(event);
    }
  }
}
