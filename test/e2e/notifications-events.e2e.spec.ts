import pg from 'pg';
import request from 'supertest';
import { NotificationOutbox } from '../../src/notifications/notification-outbox.js';
import { insertUser } from '../factories/user.factory.js';
import { RunningApp, TestDeployment } from '../support/app.js';
import { createProject, eventually, login } from '../support/http.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';

type Status = 'PASSED' | 'FAILED' | 'BROKEN' | 'SKIPPED';

/**
 * The events other features send through notifications (API.md, "Notifications"), end to end with a local receiver:
 * `run.failed` when a run's gate FAILED (at its finish or on its evaluation again after a triage), and `failure.new`
 * with every signature first seen in a run, as it finishes; each once a run.
 */
describe('Notifications: run.failed from the gate, failure.new from triage', () => {
  const receiver = new WebhookReceiver();
  let deployment: TestDeployment;
  let svc: RunningApp;
  let owner: string;
  let projectId: number;

  const get = (path: string) => request(svc.url).get(path).set('Authorization', `Bearer ${owner}`);
  const send = (method: 'post' | 'put' | 'patch', path: string, body: object = {}) =>
    request(svc.url)[method](path).set('Authorization', `Bearer ${owner}`).send(body);

  async function webhook(path: string, events: string[]) {
    return (
      await send('post', `/api/projects/${projectId}/webhooks`, { url: receiver.url(path), events }).expect(
        201,
      )
    ).body as { id: number };
  }

  /** A finished V1 run; a failure's message is given with its status (`FAILED:the message`). */
  async function run(name: string, outcomes: Record<string, Status | `${'FAILED' | 'BROKEN'}:${string}`>) {
    const created = (await send('post', `/api/projects/${projectId}/runs`, { name }).expect(201)).body as {
      id: number;
    };
    const results = Object.entries(outcomes).map(([test, outcome]) => {
      const [status, message] = outcome.split(':');
      return { name: test, suite: 'S', status, message };
    });
    await send('post', `/api/runs/${created.id}/results`, { results }).expect(201);
    await send('post', `/api/runs/${created.id}/finish`).expect(200);
    return created.id;
  }

  /** Every delivery to the webhook settled, then a ping through it as a barrier: what came before it is all. */
  async function receivedBefore(hookId: number, path: string) {
    await send('post', `/api/webhooks/${hookId}/test`).expect(202);
    const got = await eventually(async () => {
      const list = (await get(`/api/webhooks/${hookId}/deliveries?size=100`).expect(200)).body.content as {
        event: string;
        status: string;
      }[];
      const all = receiver.on(path);
      return list.some((d) => d.event === 'ping') &&
        list.every((d) => d.status === 'DELIVERED') &&
        all.some((r) => r.json.type === 'ping')
        ? all
        : undefined;
    }, 30_000);
    return got.map((r) => r.json as { type: string; data: Record<string, unknown> });
  }

  const gateOf = async (runId: number) =>
    (await get(`/api/runs/${runId}/gate`).expect(200)).body as { status: string; evaluatedAt: string };

  async function signatureOf(runId: number, test: string): Promise<number> {
    const results = (await get(`/api/runs/${runId}/results?size=100`).expect(200)).body.content as {
      name: string;
      failure?: { signatureId: number };
    }[];
    return results.find((r) => r.name === test)!.failure!.signatureId;
  }

  beforeAll(async () => {
    await receiver.start();
    deployment = new TestDeployment({ SVC_WEBHOOK_ALLOW_PRIVATE: 'true', SVC_WEBHOOK_RETRY_BASE: '1s' });
    [svc] = await deployment.start();
    const user = await insertUser(svc.dataSource);
    owner = (await login(svc.url, user.email, user.password)).accessToken;
    projectId = await createProject(svc.url, owner, { key: 'EVENTS', name: 'Events' });
    // The project's own gate: maxFailed 0, known issues left out.
    await send('patch', `/api/projects/${projectId}/settings`, {
      gate: { enabled: true, maxFailed: 0, ignoreKnownIssues: true },
    }).expect(200);
    await send('put', `/api/projects/${projectId}/notifications/me`, {
      runFailed: true,
      newFailures: true,
    }).expect(200);
  });
  afterAll(async () => {
    await deployment.stop();
    await receiver.close();
  });

  it('delivers run.failed with the run and its gate when the gate fails, once a run, also when it fails again', async () => {
    const hook = await webhook('/failed', ['run.failed']);
    const passed = await run('green', { a: 'PASSED' });
    const failed = await run('red', { a: 'PASSED', b: 'FAILED:the basket was empty' });
    expect((await gateOf(passed)).status).toBe('PASSED');
    expect((await gateOf(failed)).status).toBe('FAILED');
    // Finished again, and evaluated again after triages (known, then counted again): still one run.failed.
    await send('post', `/api/runs/${failed}/finish`).expect(200);
    const signature = await signatureOf(failed, 'b');
    await send('patch', `/api/failures/${signature}`, { triage: 'PRODUCT_BUG' }).expect(200);
    await eventually(async () => ((await gateOf(failed)).status === 'PASSED' ? true : undefined));
    await send('patch', `/api/failures/${signature}`, { triage: 'TO_INVESTIGATE' }).expect(200);
    await eventually(async () => ((await gateOf(failed)).status === 'FAILED' ? true : undefined));

    const got = await receivedBefore(hook.id, '/failed');
    expect(got.map((r) => r.type)).toEqual(['run.failed', 'ping']);
    expect(got[0].data).toMatchObject({
      run: { id: failed, name: 'red', gate: { status: 'FAILED' } },
      gate: { status: 'FAILED', conditions: [{ name: 'maxFailed', expected: 0, actual: 1, passed: false }] },
      url: expect.stringMatching(new RegExp(`/runs/${failed}$`)),
    });
    const mails: { kind: string }[] = await svc.dataSource.query(
      `SELECT kind FROM notification_mails WHERE run_id = $1 ORDER BY kind`,
      [failed],
    );
    expect(mails.map((m) => m.kind)).toEqual(['new-failures', 'run-failed']);
  });

  it('delivers run.failed for a run whose gate fails only on its evaluation again', async () => {
    // Its failure a known one at the finish (the signature triaged before), so the gate PASSED then. One stream
    // (`late #1`, `late #2`): the later run is the latest, the one a triage evaluates again.
    const first = await run('late #1', { c: 'FAILED:the payment timed out' });
    const signature = await signatureOf(first, 'c');
    await send('patch', `/api/failures/${signature}`, { triage: 'SYSTEM_ISSUE' }).expect(200);
    const hook = await webhook('/late', ['run.failed']);
    const later = await run('late #2', { c: 'FAILED:the payment timed out' });
    expect((await gateOf(later)).status).toBe('PASSED');
    await send('patch', `/api/failures/${signature}`, { triage: 'TO_INVESTIGATE' }).expect(200);
    await eventually(async () => ((await gateOf(later)).status === 'FAILED' ? true : undefined));
    const got = await eventually(async () => {
      const all = receiver.on('/late');
      return all.length ? all : undefined;
    }, 30_000);
    expect(got[0].json).toMatchObject({ type: 'run.failed', data: { run: { id: later } } });
    const types = (await receivedBefore(hook.id, '/late')).map((r) => r.type);
    expect(types).toEqual(['run.failed', 'ping']);
  });

  it('delivers failure.new listing the signatures first seen in a run, once, and nothing for a run without', async () => {
    const hook = await webhook('/new', ['failure.new']);
    const one = await run('one', {
      a: 'PASSED',
      d: 'FAILED:the cart lost its items',
      e: 'BROKEN:the database went away',
    });
    const two = await run('two', {
      d: 'FAILED:the cart lost its items',
      e: 'BROKEN:the database went away',
      f: 'FAILED:the coupon was refused',
    });
    const three = await run('three', { d: 'FAILED:the cart lost its items' });
    await send('post', `/api/runs/${one}/finish`).expect(200);

    const got = await receivedBefore(hook.id, '/new');
    expect(got.map((r) => r.type)).toEqual(['failure.new', 'failure.new', 'ping']);
    const [first, second] = got.map(
      (r) =>
        r.data as {
          run: { id: number };
          count: number;
          signatures: { id: number; sampleMessage: string; firstSeen: { runId: number } }[];
        },
    );
    expect(first.run.id).toBe(one);
    expect(first.count).toBe(2);
    expect(first.signatures.map((s) => s.sampleMessage).sort()).toEqual([
      'the cart lost its items',
      'the database went away',
    ]);
    expect(first.signatures.every((s) => s.firstSeen.runId === one)).toBe(true);
    expect(second).toMatchObject({
      run: { id: two },
      count: 1,
      signatures: [{ id: await signatureOf(two, 'f'), sampleMessage: 'the coupon was refused' }],
    });
    expect(got.some((r) => (r.data.run as { id: number } | undefined)?.id === three)).toBe(false);
    const mails: { run_id: string }[] = await svc.dataSource.query(
      `SELECT run_id FROM notification_mails WHERE kind = 'new-failures' AND run_id = ANY($1::bigint[])`,
      [[one, two, three]],
    );
    expect(mails.map((m) => Number(m.run_id)).sort()).toEqual([one, two].sort());
  });

  it("announces a run's owed event that another replica's announcement held and left owed, without the sweep", async () => {
    // Two finishes of one run on two replicas: the second one's announcement can claim the run's owed row while the
    // first replica still evaluates the gate, and leave it owed (the gate is pending). The first replica's
    // announcement, once its gate is stored, waits for that claim to end and announces it.
    const finished = await run('held', { a: 'PASSED' });
    const [{ id }]: { id: string }[] = await svc.dataSource.query(
      `INSERT INTO pending_notifications (project_id, type, event_key, run_id)
       VALUES ($1, 'run.finished', $2, $3) RETURNING id::text AS id`,
      [projectId, `run.finished:held:${finished}`, finished],
    );
    const other = new pg.Client({ connectionString: svc.config.db.url });
    await other.connect();
    let announced: Promise<void>;
    try {
      await other.query('BEGIN');
      await other.query('SELECT id FROM pending_notifications WHERE id = $1 FOR UPDATE', [id]);
      // The finishing replica's announcement, as its finish's event calls it.
      announced = svc.app.get(NotificationOutbox).onResults({
        projectId: String(projectId),
        event: 'run.finished',
        runId: String(finished),
        data: {},
      });
      // Held meanwhile; then let go with the row left as it was (not a timed assertion: the outcome is checked).
      await new Promise((resolve) => setTimeout(resolve, 300));
      await other.query('COMMIT');
    } finally {
      await other.end();
    }
    await announced;
    const left = await svc.dataSource.query('SELECT 1 FROM pending_notifications WHERE id = $1', [id]);
    expect(left).toEqual([]);
  });
});

/**
 * A write that turns many tests flaky at once owes an event for each: announced after its commit one at a time, so
 * that the announcements (a connection for their transaction, another for what they read) never take every
 * connection of the pool. Side by side, 12 of them held a pool of 4 until its connection timeout, and every request
 * then failed; the sweep (10 minutes away here) is not what delivers them.
 */
describe('Notifications: many events owed by one write, with a small pool', () => {
  const receiver = new WebhookReceiver();
  let deployment: TestDeployment;
  let svc: RunningApp;
  let owner: string;

  beforeAll(async () => {
    await receiver.start();
    deployment = new TestDeployment({
      SVC_WEBHOOK_ALLOW_PRIVATE: 'true',
      SVC_DB_POOL_SIZE: '4',
      SVC_NOTIFY_GRACE: '10m',
    });
    [svc] = await deployment.start();
    const user = await insertUser(svc.dataSource);
    owner = (await login(svc.url, user.email, user.password)).accessToken;
  });
  afterAll(async () => {
    await deployment.stop();
    await receiver.close();
  });

  it('announces each test.flaky of a write once, and keeps answering meanwhile', async () => {
    const send = (path: string, body: object = {}) =>
      request(svc.url).post(path).set('Authorization', `Bearer ${owner}`).send(body);
    const projectId = await createProject(svc.url, owner, { key: 'MANY', name: 'Many' });
    const hook = (
      await send(`/api/projects/${projectId}/webhooks`, {
        url: receiver.url('/many'),
        events: ['test.flaky'],
      }).expect(201)
    ).body as { id: number };
    const run = (await send(`/api/projects/${projectId}/runs`, { name: 'ci' }).expect(201)).body.id as number;
    // Each test failed, then passed on retry: flaky by the first rule, 12 at once.
    const results = Array.from({ length: 12 }, (_, i) => [
      { name: `retried ${i}`, suite: 'S', status: 'FAILED', retry: 0 },
      { name: `retried ${i}`, suite: 'S', status: 'PASSED', retry: 1 },
    ]).flat();
    await send(`/api/runs/${run}/results`, { results }).expect(201);
    await request(svc.url).get(`/api/runs/${run}`).set('Authorization', `Bearer ${owner}`).expect(200);
    const delivered = await eventually(async () => {
      const got = receiver.on('/many').filter((r) => r.json.type === 'test.flaky');
      return got.length >= 12 ? got : undefined;
    }, 30_000);
    const tests = delivered.map((r) => (r.json as { data: { test: { id: number } } }).data.test.id);
    expect(new Set(tests).size).toBe(12);
    expect(tests).toHaveLength(12);
    const [{ n }] = await svc.dataSource.query('SELECT count(*)::int AS n FROM pending_notifications');
    expect(n).toBe(0);
    const deliveries = (
      await request(svc.url)
        .get(`/api/webhooks/${hook.id}/deliveries?size=100`)
        .set('Authorization', `Bearer ${owner}`)
        .expect(200)
    ).body.content as { event: string }[];
    expect(deliveries.filter((d) => d.event === 'test.flaky')).toHaveLength(12);
  });
});
