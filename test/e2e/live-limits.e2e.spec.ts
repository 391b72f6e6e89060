import request from 'supertest';
import { insertUser } from '../factories/user.factory.js';
import { LiveSockets } from '../../src/live/live-sockets.js';
import { RunningApp, startApp } from '../support/app.js';
import { createTestDatabase, TestDatabase } from '../support/database.js';
import { eventually, login } from '../support/http.js';
import { LiveClient } from '../support/live.js';
import { CapturedLogs } from '../support/logs.js';

/**
 * Caps on live sockets (issue 34, item 5) and client protocol errors on /ws (item 6). The test client is the
 * trusted proxy, so that X-Forwarded-For gives each test addresses of its own.
 */
describe('Live sockets: caps per user and per address, and protocol errors that do not flood the log', () => {
  const logs = new CapturedLogs();
  let database: TestDatabase;
  let app: RunningApp;
  let sockets: LiveSockets;
  const clients: LiveClient[] = [];
  /** Two users, each owning a project to subscribe to (a subscription acknowledged: the socket was taken on). */
  const users: { token: string; projectId: number }[] = [];

  const from = (address: string) => ({ 'X-Forwarded-For': address });
  const open = async (address: string) => {
    const client = await LiveClient.open(app.url, from(address));
    clients.push(client);
    return client;
  };
  /** A socket from `address` authenticated as `user` and subscribed to its project: taken on. */
  const accepted = async (address: string, user = users[0]) => {
    const client = await open(address);
    client.send({ type: 'auth', token: user.token });
    client.send({ type: 'subscribe', projectId: user.projectId });
    await client.next((m) => m.type === 'subscribed' || m.type === 'error');
    expect(client.messages).toEqual([{ type: 'subscribed', projectId: user.projectId }]);
    return client;
  };
  /** A socket that was refused: an error message saying why, then 4429. */
  const refused = async (client: LiveClient, why: RegExp) => {
    expect(await client.closed).toEqual({ code: 4429, reason: 'Too many sockets' });
    expect(client.messages).toEqual([{ type: 'error', status: 429, message: expect.stringMatching(why) }]);
  };
  /** Closes `client` and waits until the service has let go of it too. */
  const closeAndWait = async (client: LiveClient) => {
    const before = sockets.size;
    client.close();
    await client.closed;
    await eventually(async () => (sockets.size < before ? true : undefined));
  };

  beforeAll(async () => {
    database = await createTestDatabase();
    app = await startApp(
      {
        SVC_DB_URL: database.url,
        SVC_TRUSTED_PROXIES: '127.0.0.1',
        SVC_WS_MAX_PER_USER: '3',
        SVC_WS_MAX_PER_ADDRESS: '4',
        SVC_WS_MAX_UNAUTHENTICATED_PER_ADDRESS: '2',
      },
      { logger: logs },
    );
    sockets = app.app.get(LiveSockets);
    for (const key of ['CAPA', 'CAPB']) {
      const user = await insertUser(app.dataSource);
      const token = (await login(app.url, user.email, user.password)).accessToken;
      const projectId = (
        await request(app.url)
          .post('/api/projects')
          .set('Authorization', `Bearer ${token}`)
          .send({ key, name: key })
          .expect(201)
      ).body.id as number;
      users.push({ token, projectId });
    }
  });
  afterEach(async () => {
    clients.splice(0).forEach((c) => c.close());
    await eventually(async () => (sockets.size === 0 ? true : undefined));
  });
  afterAll(async () => {
    await app.close();
    await database.drop();
  });

  describe('caps (issue 34, item 5)', () => {
    it('refuses a user’s socket beyond SVC_WS_MAX_PER_USER with an error and 4429, and takes one again once one closes', async () => {
      // From addresses of their own: only the per-user cap is in play.
      const three = [await accepted('10.1.0.1'), await accepted('10.1.0.2'), await accepted('10.1.0.3')];
      const fourth = await open('10.1.0.4');
      fourth.send({ type: 'auth', token: users[0].token });
      await refused(fourth, /3 sockets are open for this user/);
      // Another user is not concerned.
      await accepted('10.1.0.4', users[1]);

      await closeAndWait(three[0]);
      await accepted('10.1.0.5');
      const again = await open('10.1.0.6');
      again.send({ type: 'auth', token: users[0].token });
      await refused(again, /for this user/);
    });

    it('refuses a socket beyond SVC_WS_MAX_PER_ADDRESS at once, authenticated or not, and takes one again once one closes', async () => {
      const four = [
        await accepted('10.2.0.1'),
        await accepted('10.2.0.1'),
        await accepted('10.2.0.1', users[1]),
        await accepted('10.2.0.1', users[1]),
      ];
      await refused(await open('10.2.0.1'), /4 sockets are open from this address/);
      // Another address is not concerned.
      await accepted('10.2.0.2');

      await closeAndWait(four[3]);
      await accepted('10.2.0.1', users[1]);
      await refused(await open('10.2.0.1'), /from this address/);
    });

    it('refuses an unauthenticated socket beyond SVC_WS_MAX_UNAUTHENTICATED_PER_ADDRESS; authenticating or closing one makes room', async () => {
      const [first, second] = [await open('10.3.0.1'), await open('10.3.0.1')];
      await refused(await open('10.3.0.1'), /2 sockets from this address have not authenticated yet/);

      // Authenticated, a socket no longer counts as waiting.
      first.send({ type: 'auth', token: users[0].token });
      first.send({ type: 'subscribe', projectId: users[0].projectId });
      await first.next((m) => m.type === 'subscribed');
      const third = await open('10.3.0.1');
      await refused(await open('10.3.0.1'), /have not authenticated yet/);

      await closeAndWait(second);
      await open('10.3.0.1');
      await refused(await open('10.3.0.1'), /have not authenticated yet/);
      expect(third.messages).toEqual([]);
    });

    it('lets go of every count when the sockets close: a full house again, then refusals again', async () => {
      for (let round = 0; round < 2; round++) {
        const full = [await accepted('10.4.0.1'), await accepted('10.4.0.1'), await accepted('10.4.0.1')];
        const extra = await open('10.4.0.2');
        extra.send({ type: 'auth', token: users[0].token });
        await refused(extra, /for this user/);
        await Promise.all(full.map((c) => closeAndWait(c)));
        await eventually(async () => (sockets.size === 0 ? true : undefined));
      }
    });
  });

  describe('protocol errors (issue 34, item 6)', () => {
    it('closes sockets that send text that is not UTF-8 (1007) or frames over 64 KiB (1009), logging a few warn lines at most, no errors, no stacks', async () => {
      logs.lines.splice(0);
      const addresses = ['10.6.0.1', '10.6.0.2', '10.6.0.3'];
      for (let i = 0; i < 50; i++) {
        const client = await open(addresses[i % addresses.length]);
        const oversized = i % 2 === 1;
        if (oversized) {
          client.ws.send(JSON.stringify({ type: 'auth', token: 'x'.repeat(64 * 1024) }));
        } else {
          client.ws.send(Buffer.from([0x7b, 0xff, 0xfe, 0x7d]), { binary: false });
        }
        expect((await client.closed).code).toBe(oversized ? 1009 : 1007);
        // Let the service drop it before the next (the unauthenticated cap is 2 an address).
        await eventually(async () => (sockets.size === 0 ? true : undefined));
      }
      expect(logs.at('error', 'fatal')).toEqual([]);
      const warnings = logs.at('warn');
      // One line per address and minute: three here, whatever the number of sockets.
      expect(warnings.length).toBeGreaterThanOrEqual(1);
      expect(warnings.length).toBeLessThanOrEqual(addresses.length);
      for (const line of warnings) {
        expect(line.message).toMatch(/^A live socket from 10\.6\.0\.\d was closed: /);
        expect(line.message).not.toContain('\n');
        expect(line.stack).toBeUndefined();
      }
    });
  });
});
