import { jest } from '@jest/globals';
import { EventEmitter } from 'node:events';
import type { WebSocket } from 'ws';
import type { ProjectAccessService } from '../access/project-access.service.js';
import type { AuthenticationGuard } from '../auth/authentication.guard.js';
import { AppError } from '../common/app-error.js';
import type { AppConfig } from '../config/app-config.js';
import { InProcessRelay } from '../infra/relay/in-process.relay.js';
import { CLOSE, LiveSockets } from './live-sockets.js';

/** The part of a ws socket LiveSockets uses. */
class FakeSocket extends EventEmitter {
  readonly OPEN = 1;
  readyState = 1;
  bufferedAmount = 0;
  sent: string[] = [];
  closedWith?: number;
  terminated = false;
  pings = 0;

  send(frame: string): void {
    this.sent.push(frame);
  }
  close(code: number): void {
    this.closedWith ??= code;
    this.readyState = 2;
  }
  terminate(): void {
    this.terminated = true;
    this.readyState = 3;
    this.emit('close');
  }
  ping(): void {
    this.pings++;
  }
  frame(message: object): void {
    this.emit('message', Buffer.from(JSON.stringify(message)), false);
  }
  messages(): { type: string }[] {
    return this.sent.map((s) => JSON.parse(s) as { type: string });
  }
}

const CAPS = { maxPerUser: 100, maxPerAddress: 200, maxUnauthenticatedPerAddress: 20 };

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe(LiveSockets.name, () => {
  let relay: InProcessRelay;
  let sut: LiveSockets;
  let databaseAway = false;

  beforeEach(() => {
    relay = new InProcessRelay();
    const auth = {
      authenticateToken: async (token: string) => {
        if (token !== 'good') {
          throw AppError.unauthenticated('The access token is invalid');
        }
        return { user: { id: '1', admin: false, via: 'API_TOKEN' as const, credentialId: 't' } };
      },
    };
    const access = {
      require: async (_user: unknown, projectId: string) => {
        if (databaseAway) {
          throw new Error('Connection terminated unexpectedly');
        }
        if (projectId !== '7') {
          throw AppError.notFound(`Project ${projectId} not found`);
        }
        return 'VIEWER';
      },
    };
    sut = new LiveSockets(
      auth as unknown as AuthenticationGuard,
      access as unknown as ProjectAccessService,
      relay,
      { live: { ...CAPS, pingIntervalMs: 60_000 } } as AppConfig,
    );
  });
  afterEach(() => {
    sut.onModuleDestroy();
    databaseAway = false;
  });

  async function subscribedSocket(): Promise<FakeSocket> {
    const ws = new FakeSocket();
    sut.accept(ws as unknown as WebSocket, '10.0.0.1');
    ws.frame({ type: 'auth', token: 'good' });
    ws.frame({ type: 'subscribe', projectId: 7 });
    for (let i = 0; i < 10 && !ws.sent.length; i++) {
      await settle();
    }
    expect(ws.messages()).toEqual([{ type: 'subscribed', projectId: 7 }]);
    return ws;
  }

  const publish = async () => {
    relay.publish({ projectId: '7', event: 'run.created', data: { runId: 1 }, at: new Date().toISOString() });
    for (let i = 0; i < 5; i++) {
      await settle();
    }
  };

  it('sends events to subscribers, serialised once', async () => {
    const [one, two] = [await subscribedSocket(), await subscribedSocket()];
    await publish();
    expect(one.sent[1]).toBe(two.sent[1]);
    expect(JSON.parse(one.sent[1])).toEqual({
      type: 'event',
      projectId: 7,
      event: 'run.created',
      data: { runId: 1 },
      at: expect.any(String),
    });
  });

  it('closes a socket that does not read its events with 1013 instead of queueing more, and cuts it off later', async () => {
    jest.useFakeTimers({ doNotFake: ['setImmediate', 'nextTick'] });
    try {
      const slow = await subscribedSocket();
      const fine = await subscribedSocket();
      slow.bufferedAmount = 1024 * 1024 + 1;
      await publish();
      expect(slow.closedWith).toBe(CLOSE.TOO_SLOW);
      expect(slow.sent).toHaveLength(1);
      expect(fine.sent).toHaveLength(2);
      jest.advanceTimersByTime(10_000);
      expect(slow.terminated).toBe(true);
    } finally {
      jest.useRealTimers();
    }
  });

  it('pings every socket, and terminates one that did not answer the previous ping', () => {
    jest.useFakeTimers({ doNotFake: ['setImmediate', 'nextTick'] });
    try {
      const sockets = new LiveSockets(
        {} as AuthenticationGuard,
        {} as ProjectAccessService,
        new InProcessRelay(),
        {
          live: { ...CAPS, pingIntervalMs: 1_000 },
        } as AppConfig,
      );
      const [answers, silent] = [new FakeSocket(), new FakeSocket()];
      sockets.accept(answers as unknown as WebSocket, '10.0.0.1');
      sockets.accept(silent as unknown as WebSocket, '10.0.0.1');
      jest.advanceTimersByTime(1_000);
      expect([answers.pings, silent.pings]).toEqual([1, 1]);
      answers.emit('pong');
      jest.advanceTimersByTime(1_000);
      expect([answers.terminated, silent.terminated]).toEqual([false, true]);
      expect(sockets.size).toBe(1);
      sockets.onModuleDestroy();
    } finally {
      jest.useRealTimers();
    }
  });

  it('answers a subscription to a project out of reach with its status, keeping the socket and its subscriptions', async () => {
    const ws = await subscribedSocket();
    ws.frame({ type: 'subscribe', projectId: 8 });
    for (let i = 0; i < 5; i++) {
      await settle();
    }
    expect(ws.messages()[1]).toEqual({
      type: 'error',
      status: 404,
      message: 'Project 8 not found',
      projectId: 8,
    });
    expect(ws.closedWith).toBeUndefined();
    await publish();
    expect(ws.messages()[2]).toEqual(expect.objectContaining({ type: 'event' }));
  });

  it('keeps delivering when the access check itself fails (the database away): no 4401, no unsubscribe', async () => {
    const ws = await subscribedSocket();
    databaseAway = true;
    await publish();
    expect(ws.closedWith).toBeUndefined();
    expect(ws.messages()[1]).toEqual(expect.objectContaining({ type: 'event' }));
  });
});
