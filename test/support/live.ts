import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import WebSocket from 'ws';

export interface LiveMessage {
  type: string;
  [key: string]: unknown;
}

/** A WebSocket client of GET /ws that keeps every message it gets, for tests. */
export class LiveClient {
  readonly messages: LiveMessage[] = [];
  readonly closed: Promise<{ code: number; reason: string }>;
  private waiters: (() => void)[] = [];

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data) => {
      this.messages.push(JSON.parse((data as Buffer).toString('utf8')) as LiveMessage);
      this.wake();
    });
    this.closed = new Promise((resolve) =>
      ws.on('close', (code, reason) => resolve({ code, reason: reason.toString() })),
    );
    ws.on('error', () => undefined);
  }

  /** `headers`: of the upgrade request (X-Forwarded-For, say); `options`: the ws client's (autoPong, say). */
  static async open(
    serviceUrl: string,
    headers: Record<string, string> = {},
    options: WebSocket.ClientOptions = {},
  ): Promise<LiveClient> {
    const ws = new WebSocket(`${serviceUrl.replace(/^http/, 'ws')}/ws`, { ...options, headers });
    const client = new LiveClient(ws);
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    return client;
  }

  /** Opens, authenticates and subscribes to `projectIds`, waiting for each acknowledgement. */
  static async subscribed(serviceUrl: string, token: string, ...projectIds: number[]): Promise<LiveClient> {
    const client = await LiveClient.open(serviceUrl);
    client.send({ type: 'auth', token });
    for (const projectId of projectIds) {
      client.send({ type: 'subscribe', projectId });
      await client.next((m) => m.type === 'subscribed' && m.projectId === projectId);
    }
    return client;
  }

  send(message: object | string): void {
    this.ws.send(typeof message === 'string' ? message : JSON.stringify(message));
  }

  /** The first message (from the start) matching `match`, waiting up to `timeoutMs` for it. */
  async next(match: (m: LiveMessage) => boolean, timeoutMs = 10_000): Promise<LiveMessage> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.messages.find(match);
      if (found) {
        return found;
      }
      const left = deadline - Date.now();
      if (left <= 0) {
        throw new Error(
          `No matching live message within ${timeoutMs} ms; got ${JSON.stringify(this.messages)}`,
        );
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  events(name?: string): LiveMessage[] {
    return this.messages.filter((m) => m.type === 'event' && (name === undefined || m.event === name));
  }

  close(): void {
    this.ws.close();
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    waiters.forEach((w) => w());
  }
}

/**
 * Restarts RabbitMQ's STOMP plugin (rabbitmqctl eval), which closes every STOMP connection from the broker's side
 * as a broker restart would. (`close_connection` takes only AMQP connections' processes.)
 */
export async function restartStompPlugin(): Promise<void> {
  await promisify(execFile)('rabbitmqctl', [
    '-q',
    'eval',
    'application:stop(rabbitmq_stomp), application:start(rabbitmq_stomp).',
  ]);
}
