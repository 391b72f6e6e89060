import pg from 'pg';
import request from 'supertest';
import { insertUser } from '../factories/user.factory.js';
import { RunningApp, TestDeployment } from '../support/app.js';
import { createProject, eventually, login } from '../support/http.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';

const ENV = { SVC_WEBHOOK_ALLOW_PRIVATE: 'true', SVC_WEBHOOK_RETRY_BASE: '1s', SVC_WEBHOOK_TIMEOUT: '2s' };

async function setUp(app: RunningApp, key: string) {
  const user = await insertUser(app.dataSource);
  const token = (await login(app.url, user.email, user.password)).accessToken;
  const projectId = await createProject(app.url, token, { key, name: key });
  return { token, projectId };
}

const deliveryStates = (app: RunningApp, webhookId: number) =>
  app.dataSource.query<{ status: string; attempts: number }[]>(
    `SELECT status, attempts FROM webhook_deliveries WHERE webhook_id = $1 ORDER BY id`,
    [webhookId],
  );

/** Two replicas share one outbox: every event is enqueued once and sent once, whichever replica saw it. */
describe('Webhook deliveries across two replicas', () => {
  const receiver = new WebhookReceiver();
  const deployment = new TestDeployment(ENV);
  let a: RunningApp;
  let b: RunningApp;

  beforeAll(async () => {
    await receiver.start();
    [a, b] = await deployment.start(2);
  });
  afterAll(async () => {
    await deployment.stop();
    await receiver.close();
  });

  it('delivers each event exactly once when both replicas see it and both senders run', async () => {
    const { token, projectId } = await setUp(a, 'TWICE');
    const post = (svc: RunningApp, path: string, body: object = {}) =>
      request(svc.url).post(path).set('Authorization', `Bearer ${token}`).send(body);
    const hook = (
      await post(a, `/api/projects/${projectId}/webhooks`, {
        url: receiver.url('/both'),
        events: ['run.finished'],
      }).expect(201)
    ).body as { id: number };
    const runs: number[] = [];
    for (let i = 0; i < 12; i++) {
      const [one, other] = i % 2 ? [a, b] : [b, a];
      const run = (await post(one, `/api/projects/${projectId}/runs`, { name: `run ${i}` }).expect(201))
        .body as { id: number };
      await post(one, `/api/runs/${run.id}/results`, { results: [{ name: 't', status: 'PASSED' }] }).expect(
        201,
      );
      // Finished on both replicas at once, as a client retrying through a load balancer might.
      await Promise.all([
        post(one, `/api/runs/${run.id}/finish`).expect(200),
        post(other, `/api/runs/${run.id}/finish`).expect(200),
      ]);
      runs.push(run.id);
    }
    await eventually(async () => {
      const states = await deliveryStates(a, hook.id);
      return states.length === 12 && states.every((s) => s.status === 'DELIVERED') ? true : undefined;
    }, 30_000);
    // A ping last, as a barrier: once it has arrived, nothing sent before it is still on its way.
    await post(b, `/api/webhooks/${hook.id}/test`).expect(202);
    await eventually(async () =>
      receiver.on('/both').some((r) => r.json.type === 'ping') ? true : undefined,
    );
    const got = receiver.on('/both').filter((r) => r.json.type === 'run.finished');
    const runIds = got.map((r) => (r.json.data as { run: { id: number } }).run.id);
    expect(runIds.sort((x, y) => x - y)).toEqual(runs);
    expect(new Set(got.map((r) => r.headers['webhook-id'])).size).toBe(12);
    expect((await deliveryStates(a, hook.id)).every((s) => s.attempts === 1)).toBe(true);
  }, 90_000);
});

/**
 * A replica is killed (SIGKILL) after the event is committed to the outbox and while its delivery is on its way:
 * another replica sends it once the dead one's lease has run out, under the same webhook-id.
 */
describe('Webhook deliveries through a replica crash', () => {
  const receiver = new WebhookReceiver();
  const deployment = new TestDeployment(ENV);

  beforeAll(async () => {
    await receiver.start();
    await deployment.start();
  });
  afterAll(async () => {
    await deployment.stop();
    await receiver.close();
  });

  it('delivers after a new replica starts what the killed one had claimed but not sent', async () => {
    const [inProcess] = deployment.replicas;
    const { token, projectId } = await setUp(inProcess, 'CRASH');
    // The only sender from here on is the process replica that will be killed.
    const db = inProcess.config.db.url!;
    await deployment.closeReplicas();
    const crashing = await deployment.startProcessReplica();
    const post = (url: string, path: string, body: object = {}) =>
      request(url).post(path).set('Authorization', `Bearer ${token}`).send(body);
    receiver.script('/crash', (n) => (n === 0 ? 'hang' : 200));
    const hook = (
      await post(crashing.url, `/api/projects/${projectId}/webhooks`, {
        url: receiver.url('/crash'),
        events: ['run.finished'],
      }).expect(201)
    ).body as { id: number };
    const run = (await post(crashing.url, `/api/projects/${projectId}/runs`, { name: 'crash' }).expect(201))
      .body as { id: number };
    await post(crashing.url, `/api/runs/${run.id}/finish`).expect(200);

    // The committed delivery is on its way (the receiver holds it unanswered) when the replica dies.
    await eventually(async () => (receiver.on('/crash').length === 1 ? true : undefined));
    await crashing.kill('SIGKILL');
    const client = new pg.Client({ connectionString: db });
    await client.connect();
    const {
      rows: [held],
    } = await client
      .query(
        `SELECT status, attempts, locked_until IS NOT NULL AS leased FROM webhook_deliveries WHERE webhook_id = $1`,
        [hook.id],
      )
      .finally(() => client.end());
    expect(held).toEqual({ status: 'PENDING', attempts: 0, leased: true });

    const restarted = await deployment.startProcessReplica();
    await eventually(async () => (receiver.on('/crash').length === 2 ? true : undefined), 60_000);
    const [first, second] = receiver.on('/crash');
    expect(second.headers['webhook-id']).toBe(first.headers['webhook-id']);
    expect(second.body).toBe(first.body);
    const delivered = await eventually(async () => {
      const list = (
        await request(restarted.url)
          .get(`/api/webhooks/${hook.id}/deliveries`)
          .set('Authorization', `Bearer ${token}`)
          .expect(200)
      ).body.content as { status: string; attempts: number }[];
      return list[0]?.status === 'DELIVERED' ? list : undefined;
    });
    expect(delivered).toEqual([
      expect.objectContaining({
        event: 'run.finished',
        status: 'DELIVERED',
        attempts: 1,
        lastStatusCode: 200,
      }),
    ]);
  }, 120_000);
});
