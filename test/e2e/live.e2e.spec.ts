import { randomBytes, randomUUID } from 'node:crypto';
import request from 'supertest';
import { insertUser } from '../factories/user.factory.js';
import { LiveSockets } from '../../src/live/live-sockets.js';
import { RunningApp, TestDeployment } from '../support/app.js';
import { eventually, login, createProject } from '../support/http.js';
import { LiveClient, restartStompPlugin } from '../support/live.js';
import { freePort } from '../support/process.js';
import { TEST_STOMP_HOST, TEST_STOMP_PORT } from '../support/services.js';

const STOMP_ENV = {
  SVC_BROKER_STOMP_HOST: TEST_STOMP_HOST,
  SVC_BROKER_STOMP_PORT: TEST_STOMP_PORT,
  SVC_BROKER_STOMP_LOGIN: 'guest',
  SVC_BROKER_STOMP_PASSCODE: 'guest',
  // A topic of this test's own: other deployments on the same broker must not reach its sockets.
  SVC_BROKER_STOMP_TOPIC: `test-${randomBytes(4).toString('hex')}.live`,
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('Live updates over WebSocket, two replicas relayed through the broker’s STOMP plugin', () => {
  const deployment = new TestDeployment(STOMP_ENV);
  let a: RunningApp;
  let b: RunningApp;
  let owner: string;
  let reporterToken: string;
  let viewer: { id: string; jwt: string };
  let projectId: number;
  let otherProjectId: number;
  const clients: LiveClient[] = [];

  const post = (url: string, token: string, path: string, body: object) =>
    request(url).post(path).set('Authorization', `Bearer ${token}`).send(body);
  const track = (client: LiveClient) => {
    clients.push(client);
    return client;
  };
  const subscribed = async (url: string, token: string, ...projects: number[]) =>
    track(await LiveClient.subscribed(url, token, ...projects));

  /** A new user with `role` on the project, signed in. */
  async function member(role: 'VIEWER' | 'REPORTER'): Promise<{ id: string; jwt: string }> {
    const user = await insertUser(a.dataSource);
    await request(a.url)
      .put(`/api/projects/${projectId}/members/${user.id}`)
      .set('Authorization', `Bearer ${owner}`)
      .send({ role })
      .expect(200);
    return { id: user.id, jwt: (await login(a.url, user.email, user.password)).accessToken };
  }

  beforeAll(async () => {
    [a, b] = await deployment.start(2);
    const o = await insertUser(a.dataSource);
    owner = (await login(a.url, o.email, o.password)).accessToken;
    projectId = (await post(a.url, owner, '/api/projects', { key: 'LIVE', name: 'Live' }).expect(201)).body
      .id;
    otherProjectId = (await post(a.url, owner, '/api/projects', { key: 'OTHER', name: 'Other' }).expect(201))
      .body.id;
    const reporter = await member('REPORTER');
    reporterToken = (await post(a.url, reporter.jwt, '/api/users/me/api-keys', { name: 'ci' }).expect(201))
      .body.token;
    viewer = await member('VIEWER');
  });
  afterEach(() => {
    clients.splice(0).forEach((c) => c.close());
  });
  afterAll(() => deployment.stop());

  it('answers GET /ws without an upgrade with 426 and the house error body', async () => {
    const res = await request(a.url).get('/ws').expect(426);
    expect(res.body).toEqual({
      status: 426,
      error: 'Upgrade Required',
      message: expect.stringContaining('WebSocket'),
    });
  });

  it('names the STOMP relay in readiness', async () => {
    const ready = await request(a.url).get('/api/health/ready').expect(200);
    expect(ready.body.components).toEqual(expect.objectContaining({ relay: 'up' }));
  });

  it('delivers a V1 run, its batches and its end to a socket on each replica, each exactly once', async () => {
    const onA = await subscribed(a.url, viewer.jwt, projectId);
    const onB = await subscribed(b.url, owner, projectId);
    const run = (
      await post(a.url, reporterToken, `/api/projects/${projectId}/runs`, { name: 'live v1' }).expect(201)
    ).body;
    const results = [
      { name: 'a', status: 'PASSED' },
      { name: 'b', status: 'FAILED' },
    ];
    await post(a.url, reporterToken, `/api/runs/${run.id}/results`, { results }).expect(201);
    await post(b.url, reporterToken, `/api/runs/${run.id}/results`, {
      results: [{ name: 'c', status: 'SKIPPED' }],
    }).expect(201);
    await post(a.url, reporterToken, `/api/runs/${run.id}/finish`, {}).expect(200);
    for (const client of [onA, onB]) {
      const finished = await client.next((m) => m.event === 'run.finished');
      expect(finished).toEqual({
        type: 'event',
        projectId,
        event: 'run.finished',
        data: expect.objectContaining({
          runId: run.id,
          run: expect.objectContaining({ id: run.id, status: 'FINISHED' }),
        }),
        at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      });
    }
    await sleep(500);
    for (const client of [onA, onB]) {
      expect(client.events().map((e) => e.event)).toEqual([
        'run.created',
        'results.added',
        'results.added',
        // Its quality gate, evaluated as it finished, before the run is announced finished with it.
        'run.gate',
        'run.finished',
      ]);
      const added = client
        .events('results.added')
        .map((e) => e.data as { runId: number; counts: { total: number } });
      expect(added.map((d) => [d.runId, d.counts.total])).toEqual([
        [run.id, 2],
        [run.id, 3],
      ]);
    }
  });

  it('delivers V2 and import events too, and nothing of another project', async () => {
    const mine = await subscribed(b.url, viewer.jwt, projectId);
    const other = await subscribed(b.url, owner, otherProjectId);
    const uuid = randomUUID();
    await post(a.url, reporterToken, `/api/v2/projects/${projectId}/runs`, { uuid, name: 'live v2' }).expect(
      202,
    );
    await post(a.url, reporterToken, `/api/v2/projects/${projectId}/runs/${uuid}/results`, {
      results: [{ uuid: randomUUID(), name: 'v2 test', status: 'PASSED' }],
    }).expect(202);
    const added = await mine.next((m) => m.event === 'results.added');
    expect(added.data).toEqual(
      expect.objectContaining({ runId: expect.any(Number), counts: expect.objectContaining({ total: 1 }) }),
    );
    const imported = await request(a.url)
      .post(`/api/import/junit?projectId=${projectId}`)
      .set('Authorization', `Bearer ${reporterToken}`)
      .set('Content-Type', 'application/xml')
      .send(
        '<testsuite name="s"><testcase name="x"/><testcase name="y"><failure message="no"/></testcase></testsuite>',
      )
      .expect(201);
    const completed = await mine.next((m) => m.event === 'import.completed');
    expect(completed.data).toEqual(expect.objectContaining({ runId: imported.body.runId, format: 'junit' }));
    expect(
      mine
        .events()
        .filter((e) => (e.data as { runId: number }).runId === imported.body.runId)
        .map((e) => e.event),
    ).toEqual(expect.arrayContaining(['run.created', 'results.added', 'run.finished', 'import.completed']));
    await sleep(300);
    expect(other.events()).toEqual([]);
  });

  it('authenticates with an API token, and refuses subscriptions before auth or to projects out of reach', async () => {
    const client = track(await LiveClient.open(a.url));
    client.send({ type: 'subscribe', projectId });
    expect(await client.next((m) => m.type === 'error')).toEqual({
      type: 'error',
      status: 401,
      message: expect.stringContaining('Authenticate first'),
      projectId,
    });
    client.send({ type: 'auth', token: 'tms_not-a-token' });
    expect(
      await client.next((m) => m.type === 'error' && m.status === 401 && m !== client.messages[0]),
    ).toEqual(expect.objectContaining({ message: 'The API token is invalid, expired or revoked' }));
    client.send({ type: 'auth', token: reporterToken });
    client.send({ type: 'subscribe', projectId: otherProjectId });
    expect(await client.next((m) => m.type === 'error' && m.status === 404)).toEqual(
      expect.objectContaining({ projectId: otherProjectId }),
    );
    client.send({ type: 'subscribe', projectId });
    await client.next((m) => m.type === 'subscribed' && m.projectId === projectId);
    await post(b.url, reporterToken, `/api/projects/${projectId}/runs`, { name: 'by token' }).expect(201);
    expect((await client.next((m) => m.event === 'run.created')).data).toEqual(
      expect.objectContaining({ run: expect.objectContaining({ name: 'by token' }) }),
    );
  });

  /** Within the access check's 2 s, the next event ends the subscription with the reason instead of the event. */
  const endOfSubscription = (client: LiveClient) =>
    eventually(async () => {
      await post(a.url, reporterToken, `/api/projects/${projectId}/runs`, { name: 'gone' }).expect(201);
      await sleep(300);
      return client.messages.find((m) => m.type === 'error');
    });

  it('closes an API-token socket (4401) once its token is revoked on another replica, without waiting for an event', async () => {
    const { jwt } = await member('VIEWER');
    const key = (await post(b.url, jwt, '/api/users/me/api-keys', { name: 'live' }).expect(201)).body;
    const client = await subscribed(b.url, key.token, projectId);
    await post(a.url, reporterToken, `/api/projects/${projectId}/runs`, { name: 'token still valid' }).expect(
      201,
    );
    await client.next((m) => m.event === 'run.created');
    const revokedAt = Date.now();
    await request(a.url)
      .delete(`/api/users/me/api-keys/${key.id}`)
      .set('Authorization', `Bearer ${jwt}`)
      .expect(204);
    // No event sent: the revocation itself closes it, as a logout does an access token's.
    expect(await client.closed).toEqual({ code: 4401, reason: 'The credential is no longer valid' });
    expect(Date.now() - revokedAt).toBeLessThan(5_000);
  });

  it('closes an API-token socket (4401) when its key expires, as an access token socket at its expiry', async () => {
    const { jwt } = await member('VIEWER');
    const expiresAt = new Date(Date.now() + 3_000).toISOString();
    const key = (await post(b.url, jwt, '/api/users/me/api-keys', { name: 'brief', expiresAt }).expect(201))
      .body;
    const client = await subscribed(a.url, key.token, projectId);
    expect(await client.closed).toEqual({ code: 4401, reason: 'The API key expired: send a fresh auth' });
    expect(Date.now()).toBeGreaterThanOrEqual(Date.parse(expiresAt));
  });

  it('stops delivering within seconds when a member is removed from the project', async () => {
    const v = await member('VIEWER');
    const client = await subscribed(b.url, v.jwt, projectId);
    await post(a.url, reporterToken, `/api/projects/${projectId}/runs`, { name: 'still a member' }).expect(
      201,
    );
    await client.next((m) => m.event === 'run.created');
    await request(a.url)
      .delete(`/api/projects/${projectId}/members/${v.id}`)
      .set('Authorization', `Bearer ${owner}`)
      .expect(204);
    const removed = await endOfSubscription(client);
    expect(removed).toEqual({ type: 'error', status: 404, message: expect.any(String), projectId });
    const seen = client.events().length;
    await post(a.url, reporterToken, `/api/projects/${projectId}/runs`, { name: 'after removal' }).expect(
      201,
    );
    await sleep(500);
    expect(client.events()).toHaveLength(seen);
    expect(
      client.events().some((e) => (e.data as { run?: { name: string } }).run?.name === 'after removal'),
    ).toBe(false);
  });

  it('stops delivering within seconds when the group binding that gave the role is removed', async () => {
    const admin = (await login(a.url)).accessToken;
    const asAdmin = (r: request.Test) => r.set('Authorization', `Bearer ${admin}`);
    const v = await insertUser(a.dataSource);
    const group = (
      await post(a.url, admin, '/api/admin/groups', {
        name: `live-${randomBytes(3).toString('hex')}`,
      }).expect(201)
    ).body;
    await asAdmin(request(a.url).put(`/api/admin/groups/${group.id}/bindings`))
      .send([{ projectId, role: 'VIEWER' }])
      .expect(200);
    await asAdmin(request(a.url).put(`/api/admin/groups/${group.id}/members/${v.id}`)).expect(204);
    const client = await subscribed(b.url, (await login(a.url, v.email, v.password)).accessToken, projectId);
    await post(a.url, reporterToken, `/api/projects/${projectId}/runs`, { name: 'through the group' }).expect(
      201,
    );
    await client.next((m) => m.event === 'run.created');
    await asAdmin(request(a.url).put(`/api/admin/groups/${group.id}/bindings`))
      .send([])
      .expect(200);
    expect(await endOfSubscription(client)).toEqual({
      type: 'error',
      status: 404,
      message: expect.any(String),
      projectId,
    });
  });

  it('tells every socket to resync when the broker drops the relay, and delivers again once it is back', async () => {
    const onA = await subscribed(a.url, owner, projectId);
    const onB = await subscribed(b.url, owner, projectId);
    await restartStompPlugin();
    await onA.next((m) => m.type === 'resync', 15_000);
    await onB.next((m) => m.type === 'resync', 15_000);
    await eventually(async () =>
      (await request(a.url).get('/api/health/ready')).status === 200 ? true : undefined,
    );
    await eventually(async () =>
      (await request(b.url).get('/api/health/ready')).status === 200 ? true : undefined,
    );
    await post(a.url, reporterToken, `/api/projects/${projectId}/runs`, { name: 'after the outage' }).expect(
      201,
    );
    for (const client of [onA, onB]) {
      await client.next((m) => m.event === 'run.created');
    }
    await sleep(300);
    expect(onB.events('run.created')).toHaveLength(1);
  });

  it('answers malformed frames with errors, and closes a client that keeps sending them (1008)', async () => {
    const client = track(await LiveClient.open(a.url));
    client.send('not json');
    expect(await client.next((m) => m.type === 'error')).toEqual({
      type: 'error',
      status: 400,
      message: 'A frame must be a JSON object with a "type"',
    });
    client.send({ type: 'dance' });
    await client.next(
      (m) => m.type === 'error' && String(m.message).includes('Unknown message type "dance"'),
    );
    for (let i = 0; i < 8; i++) {
      client.send('[]');
    }
    expect((await client.closed).code).toBe(1008);
    expect(client.messages.filter((m) => m.type === 'error')).toHaveLength(10);
  });

  it('keeps other subscriptions when one message fails, and closes on a frame over 64 KiB (1009)', async () => {
    const client = await subscribed(a.url, owner, projectId);
    client.send({ type: 'subscribe', projectId: 'seven' });
    await client.next((m) => m.type === 'error' && m.message === 'projectId must be a positive integer');
    await post(a.url, reporterToken, `/api/projects/${projectId}/runs`, { name: 'still subscribed' }).expect(
      201,
    );
    await client.next((m) => m.event === 'run.created');
    client.send({ type: 'auth', token: 'x'.repeat(64 * 1024) });
    expect((await client.closed).code).toBe(1009);
  });

  it('closes a socket that does not authenticate within 10 seconds (4401)', async () => {
    const client = track(await LiveClient.open(b.url));
    const started = Date.now();
    const { code } = await client.closed;
    expect(code).toBe(4401);
    expect(Date.now() - started).toBeGreaterThanOrEqual(9_500);
  }, 20_000);
});

describe('Live updates on the embedded relay (one process)', () => {
  let svc: RunningApp;
  const clients: LiveClient[] = [];
  const deployment = new TestDeployment({ SVC_ACCESS_TTL: '3s', SVC_WS_PING_INTERVAL: '1s' });

  beforeAll(async () => {
    [svc] = await deployment.start();
  });
  afterAll(async () => {
    clients.forEach((c) => c.close());
    await deployment.stop();
  });

  it('delivers events, and closes a socket whose access token expired without a fresh auth (4401)', async () => {
    const o = await insertUser(svc.dataSource);
    const session = await login(svc.url, o.email, o.password);
    const projectId = await createProject(svc.url, session.accessToken, { key: 'EMB', name: 'Embedded' });
    const refreshed = await LiveClient.subscribed(svc.url, session.accessToken, projectId);
    const expiring = await LiveClient.subscribed(svc.url, session.accessToken, projectId);
    clients.push(refreshed, expiring);
    await request(svc.url)
      .post(`/api/projects/${projectId}/runs`)
      .set('Authorization', `Bearer ${session.accessToken}`)
      .send({ name: 'embedded' })
      .expect(201);
    for (const client of [refreshed, expiring]) {
      await client.next((m) => m.event === 'run.created');
    }
    // A fresh token before the first expires keeps one socket open.
    await sleep(1_000);
    refreshed.send({ type: 'auth', token: (await login(svc.url, o.email, o.password)).accessToken });
    const closed = await expiring.closed;
    expect(closed).toEqual({ code: 4401, reason: 'The access token expired: send a fresh auth' });
    await sleep(500);
    expect(refreshed.ws.readyState).toBe(refreshed.ws.OPEN);
  }, 20_000);

  it('reaps a socket that stops answering pings', async () => {
    const sockets = svc.app.get(LiveSockets);
    const before = sockets.size;
    // A client that reads but never answers a ping (ws answers them by itself unless told not to). The test paused
    // the client's socket instead, which leans on ws's internals (it pauses and resumes sockets itself): a CI run saw
    // that socket still there after 8 s.
    const client = await LiveClient.open(svc.url, {}, { autoPong: false });
    clients.push(client);
    await eventually(async () => (sockets.size === before + 1 ? true : undefined));
    await eventually(async () => (sockets.size === before ? true : undefined), 8_000);
  });
});

describe('Live updates: readiness while the STOMP relay cannot connect', () => {
  it('answers 503 naming the relay, and still serves', async () => {
    // Nothing listens on the port: the service starts anyway, and keeps trying in the background.
    const deployment = new TestDeployment({ ...STOMP_ENV, SVC_BROKER_STOMP_PORT: String(await freePort()) });
    try {
      const [svc] = await deployment.start();
      const res = await request(svc.url).get('/api/health/ready').expect(503);
      expect(res.body).toEqual({
        status: 503,
        error: 'Service Unavailable',
        message: 'Not ready: relay does not answer',
      });
      await request(svc.url).get('/api/health').expect(200);
    } finally {
      await deployment.stop();
    }
  }, 30_000);
});
