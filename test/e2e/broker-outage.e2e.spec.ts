import { hostname } from 'node:os';
import { randomBytes, randomUUID } from 'node:crypto';
import request from 'supertest';
import { RunEntity } from '../../src/results/entities.js';
import { insertUser } from '../factories/user.factory.js';
import { RunningApp, TestDeployment } from '../support/app.js';
import { closeBrokerConnections, TEST_AMQP_URL } from '../integration/queue/queue-fixtures.js';
import { eventually, login } from '../support/http.js';
import { dropBrokerQueues } from '../support/queues.js';

/** The broker drops every connection mid-stream: nothing that got a 202 is lost or stored twice. */
describe('V2 ingest through a broker outage', () => {
  const queue = `test.outage.${randomBytes(4).toString('hex')}`;
  const deployment = new TestDeployment({ SVC_BROKER_AMQP_URL: TEST_AMQP_URL, SVC_BROKER_QUEUE: queue });
  let a: RunningApp;
  let b: RunningApp;
  let token: string;
  let projectId: number;

  beforeAll(async () => {
    [a, b] = await deployment.start(2);
    const user = await insertUser(a.dataSource);
    const jwt = (await login(a.url, user.email, user.password)).accessToken;
    projectId = (await request(a.url).post('/api/projects').set('Authorization', `Bearer ${jwt}`).send({ key: 'OUTAGE', name: 'o' }).expect(201)).body.id;
    token = jwt;
  });
  afterAll(async () => {
    try {
      await deployment.stop();
    } finally {
      await dropBrokerQueues({ SVC_BROKER_QUEUE: queue });
    }
  });

  it('answers 503 while the broker is away, reconnects, and stores every accepted result exactly once', async () => {
    const runUuid = randomUUID();
    const post = (url: string, path: string, body: object) =>
      request(url).post(path).set('Authorization', `Bearer ${token}`).send(body);
    await post(a.url, `/api/v2/projects/${projectId}/runs`, { uuid: runUuid, name: 'outage' }).expect(202);

    const accepted = new Set<string>();
    let refused = 0;
    let stop = false;
    const stream = async (url: string) => {
      while (!stop) {
        const results = Array.from({ length: 50 }, () => ({ uuid: randomUUID(), name: `t-${randomUUID()}`, status: 'PASSED' }));
        const res = await post(url, `/api/v2/projects/${projectId}/runs/${runUuid}/results`, { results });
        if (res.status === 202) {
          results.forEach((r) => accepted.add(r.uuid));
        } else {
          expect(res.status).toBe(503);
          expect(res.body).toEqual({ status: 503, error: 'Service Unavailable', message: expect.any(String) });
          refused++;
          await new Promise((r) => setTimeout(r, 50));
        }
      }
    };
    const streams = [stream(a.url), stream(b.url)];
    await new Promise((r) => setTimeout(r, 1_000));
    // Only this deployment's connections: other users of the shared broker keep theirs.
    expect(await closeBrokerConnections(`tms-ingest@${hostname()} ${queue}`)).toBeGreaterThanOrEqual(2);
    const atOutage = accepted.size;
    await new Promise((r) => setTimeout(r, 4_000));
    stop = true;
    await Promise.all(streams);

    // Every accepted result gets stored (a refused batch may be stored too: the broker can take a message
    // whose confirm was lost with the connection; clients retry a 503, and UUIDs make that harmless).
    const run = (await a.dataSource.getRepository(RunEntity).findOneBy({ projectId: String(projectId), uuid: runUuid }))!;
    const countStored = async () => {
      const rows: { uuid: string; n: string }[] = await a.dataSource.query(
        'SELECT uuid, count(*) AS n FROM results WHERE run_id = $1 GROUP BY uuid',
        [run.id],
      );
      return rows;
    };
    const stored = await eventually(async () => {
      const rows = await countStored();
      const have = new Set(rows.map((r) => r.uuid));
      return [...accepted].every((u) => have.has(u)) ? rows : undefined;
    }, 30_000);
    expect(stored.every((s) => Number(s.n) === 1)).toBe(true);
    await new Promise((r) => setTimeout(r, 1_000));
    const settled = await countStored();
    expect(settled.every((s) => Number(s.n) === 1)).toBe(true);
    const final = (await a.dataSource.getRepository(RunEntity).findOneBy({ id: run.id }))!;
    expect(final.countTotal).toBe(settled.length);
    expect(stored.length).toBeGreaterThanOrEqual(accepted.size);
    // Traffic flowed again after the broker dropped every connection: the replicas reconnected by themselves.
    expect(accepted.size).toBeGreaterThan(atOutage);
    console.info(`broker outage: ${accepted.size} results accepted, ${refused} batches refused with 503`);
  }, 60_000);
});

describe('V2 ingest with the broker unreachable', () => {
  const deployment = new TestDeployment({ SVC_BROKER_AMQP_URL: 'amqp://guest:guest@127.0.0.1:1', SVC_BROKER_QUEUE: 'test.unreachable' });
  let svc: RunningApp;

  beforeAll(async () => {
    [svc] = await deployment.start();
  });
  afterAll(() => deployment.stop());

  it('still starts, reports the broker not ready, and answers V2 writes with 503, never 202', async () => {
    const ready = await request(svc.url).get('/api/health/ready').expect(503);
    expect(ready.body.message).toMatch(/broker/);
    const user = await insertUser(svc.dataSource);
    const jwt = (await login(svc.url, user.email, user.password)).accessToken;
    const projectId = (await request(svc.url).post('/api/projects').set('Authorization', `Bearer ${jwt}`).send({ key: 'DOWN', name: 'd' }).expect(201)).body.id;
    const res = await request(svc.url)
      .post(`/api/v2/projects/${projectId}/runs`)
      .set('Authorization', `Bearer ${jwt}`)
      .send({ uuid: randomUUID(), name: 'nowhere' })
      .expect(503);
    expect(res.body).toEqual({ status: 503, error: 'Service Unavailable', message: expect.any(String) });
    // V1 does not need the broker.
    await request(svc.url).post(`/api/projects/${projectId}/runs`).set('Authorization', `Bearer ${jwt}`).send({ name: 'v1' }).expect(201);
  });
});
