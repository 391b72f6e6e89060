import pg from 'pg';
import request from 'supertest';
import { insertUser } from '../factories/user.factory.js';
import { ProcessReplica, RunningApp, TestDeployment } from '../support/app.js';
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
    // Within 30 s, well before the sweep (a minute): each finish's own replica announces it, also when the other's
    // announcement held the run's owed row at that moment (see PendingRepository.claim). The states are told should
    // they not all arrive.
    await eventually(async () => {
      const states = await deliveryStates(a, hook.id);
      return states.length === 12 && states.every((s) => s.status === 'DELIVERED') ? true : undefined;
    }, 30_000).catch(async (error: Error) => {
      throw new Error(`${error.message}: ${JSON.stringify(await deliveryStates(a, hook.id))}`);
    });
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

/**
 * A replica is killed (SIGKILL) at the instant between the commit of a change and the writing of its events to the
 * delivery outbox: held there by a lock the test takes (the gate's lock of the run, or the webhook's row, which the
 * outbox's insert must share), so that the kill falls exactly there. What the change owes was committed with it
 * (pending_notifications), and the other replicas' sweep (SVC_NOTIFY_GRACE, 1 s here) announces it: each event
 * delivered and each mail queued once, although two replicas sweep.
 */
describe('Events of a change committed just before its replica was killed', () => {
  const receiver = new WebhookReceiver();
  const deployment = new TestDeployment({ ...ENV, SVC_NOTIFY_GRACE: '1s' });
  let db: string;
  let token: string;
  let email: string;
  let projectId: number;
  let hookId: number;
  let watcher: pg.Client;
  const survivors: ProcessReplica[] = [];

  const post = (url: string, path: string, body: object = {}) =>
    request(url).post(path).set('Authorization', `Bearer ${token}`).send(body);
  const send = (url: string, method: 'put' | 'patch', path: string, body: object) =>
    request(url)[method](path).set('Authorization', `Bearer ${token}`).send(body);

  beforeAll(async () => {
    await receiver.start();
    const [setup] = await deployment.start();
    const user = await insertUser(setup.dataSource);
    email = user.email;
    token = (await login(setup.url, user.email, user.password)).accessToken;
    projectId = await createProject(setup.url, token, { key: 'KILLED', name: 'Killed' });
    await send(setup.url, 'patch', `/api/projects/${projectId}/settings`, {
      gate: { enabled: true, maxFailed: 0 },
    }).expect(200);
    await send(setup.url, 'put', `/api/projects/${projectId}/notifications/me`, {
      runFailed: true,
      newFailures: true,
    }).expect(200);
    hookId = (
      (
        await post(setup.url, `/api/projects/${projectId}/webhooks`, {
          url: receiver.url('/owed'),
          events: ['run.finished', 'run.failed', 'failure.new'],
        }).expect(201)
      ).body as { id: number }
    ).id;
    db = setup.config.db.url!;
    watcher = new pg.Client({ connectionString: db });
    await watcher.connect();
    // From here on the replicas are processes: the one that will be killed, then the ones that outlive it.
    await deployment.closeReplicas();
  });
  afterAll(async () => {
    await watcher?.end();
    await deployment.stop();
    await receiver.close();
  });

  /** Two replicas that sweep (started once, after the first kill, and kept for the later cases). */
  async function survive(): Promise<ProcessReplica[]> {
    if (!survivors.length) {
      survivors.push(
        ...(await Promise.all([deployment.startProcessReplica(), deployment.startProcessReplica()])),
      );
    }
    return survivors;
  }

  /**
   * Takes `lock` in a session of the test's own, does `act` on the replica to be killed, waits until one of that
   * replica's statements waits for the lock, kills the replica there, and lets the lock go.
   */
  async function killWhileHeld(
    crashing: ProcessReplica,
    lock: (session: pg.Client) => Promise<unknown>,
    act: () => Promise<unknown>,
  ): Promise<void> {
    const holder = new pg.Client({ connectionString: db });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await lock(holder);
      const {
        rows: [{ pid }],
      } = await holder.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
      const acting = act().catch(() => undefined); // the request dies with the replica
      await eventually(async () => {
        const { rows } = await watcher.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM pg_stat_activity WHERE $1 = ANY (pg_blocking_pids(pid))`,
          [pid],
        );
        return rows[0].n > 0 ? true : undefined;
      }, 30_000);
      await crashing.kill('SIGKILL');
      await acting;
    } finally {
      await holder.query('ROLLBACK').catch(() => undefined);
      await holder.end();
    }
  }

  /** A run with a passing test and a new failure, on the replica at `url`; not finished. */
  async function failingRun(url: string, name: string): Promise<number> {
    const run = (await post(url, `/api/projects/${projectId}/runs`, { name }).expect(201)).body as {
      id: number;
    };
    await post(url, `/api/runs/${run.id}/results`, {
      results: [
        { name: 'steady', suite: 'K', status: 'PASSED' },
        { name: `broke in ${name}`, suite: 'K', status: 'FAILED', message: `the ${name} broke` },
      ],
    }).expect(201);
    return run.id;
  }

  const committed = async (runId: number) =>
    (
      await watcher.query<{ status: string; gate: string | null; deliveries: number; mails: number }>(
        `SELECT r.status, r.gate_status AS gate,
                (SELECT count(*)::int FROM webhook_deliveries WHERE webhook_id = $2) AS deliveries,
                (SELECT count(*)::int FROM notification_mails WHERE run_id = $1) AS mails
           FROM runs r WHERE r.id = $1`,
        [runId, hookId],
      )
    ).rows[0];

  /** What the receiver got about the run once each of its three events is delivered, and a ping after them. */
  async function deliveredFor(runId: number, via: string) {
    const about = () =>
      receiver.on('/owed').filter((r) => (r.json.data as { run?: { id: number } }).run?.id === runId);
    await eventually(async () => (about().length >= 3 ? true : undefined), 60_000);
    // A ping last, as a barrier: once it has arrived, nothing sent before it is still on its way.
    const pings = receiver.on('/owed').filter((r) => r.json.type === 'ping').length;
    await post(via, `/api/webhooks/${hookId}/test`).expect(202);
    await eventually(async () =>
      receiver.on('/owed').filter((r) => r.json.type === 'ping').length > pings ? true : undefined,
    );
    return about();
  }

  async function expectOwedOnce(runId: number, name: string, via: string): Promise<void> {
    const got = await deliveredFor(runId, via);
    expect(got.map((r) => r.json.type).sort()).toEqual(['failure.new', 'run.failed', 'run.finished']);
    expect(new Set(got.map((r) => r.headers['webhook-id'])).size).toBe(3);
    const byType = Object.fromEntries(got.map((r) => [r.json.type, r.json.data as Record<string, unknown>]));
    expect(byType['run.finished']).toMatchObject({
      run: { id: runId, status: 'FINISHED', gate: { status: 'FAILED' } },
    });
    expect(byType['run.failed']).toMatchObject({
      gate: { status: 'FAILED', conditions: [{ name: 'maxFailed', expected: 0, actual: 1, passed: false }] },
    });
    expect(byType['failure.new']).toMatchObject({
      count: 1,
      signatures: [{ sampleMessage: `the ${name} broke` }],
    });
    const { rows: deliveries } = await watcher.query<{ event: string; status: string; attempts: number }>(
      `SELECT event, status, attempts FROM webhook_deliveries WHERE webhook_id = $1 AND event_key LIKE $2 ORDER BY event`,
      [hookId, `%:${runId}`],
    );
    expect(deliveries).toEqual(
      ['failure.new', 'run.failed', 'run.finished'].map((event) => ({
        event,
        status: 'DELIVERED',
        attempts: 1,
      })),
    );
    const { rows: mails } = await watcher.query<{ kind: string }>(
      `SELECT kind FROM mail_outbox WHERE recipient = $1 AND subject LIKE $2 ORDER BY kind`,
      [email.toLowerCase(), `%run "${name}"%`],
    );
    expect(mails.map((m) => m.kind)).toEqual(['new-failures', 'run-failed']);
    const { rows: owed } = await watcher.query(`SELECT type FROM pending_notifications WHERE run_id = $1`, [
      runId,
    ]);
    expect(owed).toEqual([]);
  }

  it('announces a run killed right after its finish committed, before its gate was evaluated', async () => {
    const crashing = await deployment.startProcessReplica();
    const runId = await failingRun(crashing.url, 'before the gate');
    await killWhileHeld(
      crashing,
      // The gate's lock of the run (GateRepository.locked): its evaluation, the first thing after the commit, waits.
      (session) =>
        session.query(`SELECT pg_advisory_xact_lock(hashtextextended('gate:' || $1::text, 7))`, [runId]),
      () => post(crashing.url, `/api/runs/${runId}/finish`),
    );
    expect(await committed(runId)).toEqual({ status: 'FINISHED', gate: null, deliveries: 0, mails: 0 });

    const [a] = await survive();
    await expectOwedOnce(runId, 'before the gate', a.url);
    expect(survivors.map((s) => s.output()).join('\n')).toMatch(/Announced \d+ owed notification/);
  }, 180_000);

  it('announces a run killed after its gate while its events were being written to the outbox', async () => {
    const [a] = await survive();
    const crashing = await deployment.startProcessReplica();
    const runId = await failingRun(crashing.url, 'in the outbox');
    await killWhileHeld(
      crashing,
      // The outbox's insert of a delivery shares the webhook's row (its foreign key): it waits.
      (session) => session.query(`SELECT 1 FROM webhooks WHERE id = $1 FOR UPDATE`, [hookId]),
      () => post(crashing.url, `/api/runs/${runId}/finish`),
    );
    expect(await committed(runId)).toMatchObject({ status: 'FINISHED', gate: 'FAILED', mails: 0 });
    const { rows } = await watcher.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM webhook_deliveries WHERE webhook_id = $1 AND event_key LIKE $2`,
      [hookId, `%:${runId}`],
    );
    expect(rows[0].n).toBe(0);

    await expectOwedOnce(runId, 'in the outbox', a.url);
  }, 180_000);

  it('announces a quarantine whose replica was killed right after it committed', async () => {
    const [a] = await survive();
    const hook = (
      await post(a.url, `/api/projects/${projectId}/webhooks`, {
        url: receiver.url('/quarantine'),
        events: ['test.quarantined'],
      }).expect(201)
    ).body as { id: number };
    const test = (
      await request(a.url)
        .get(`/api/projects/${projectId}/tests?q=steady`)
        .set('Authorization', `Bearer ${token}`)
        .expect(200)
    ).body.content[0] as { id: number };
    const crashing = await deployment.startProcessReplica();
    await killWhileHeld(
      crashing,
      (session) => session.query(`SELECT 1 FROM webhooks WHERE id = $1 FOR UPDATE`, [hook.id]),
      () =>
        send(crashing.url, 'put', `/api/projects/${projectId}/tests/${test.id}/quarantine`, {
          reason: 'quarantined as its replica died',
        }).expect(200),
    );
    const { rows } = await watcher.query<{ q_reason: string }>(
      `SELECT q_reason FROM test_health WHERE test_id = $1`,
      [test.id],
    );
    expect(rows).toEqual([{ q_reason: 'quarantined as its replica died' }]);

    await eventually(async () => (receiver.on('/quarantine').length ? true : undefined), 60_000);
    await post(a.url, `/api/webhooks/${hook.id}/test`).expect(202);
    await eventually(async () =>
      receiver.on('/quarantine').some((r) => r.json.type === 'ping') ? true : undefined,
    );
    const got = receiver.on('/quarantine').filter((r) => r.json.type !== 'ping');
    expect(got.map((r) => r.json)).toEqual([
      expect.objectContaining({
        type: 'test.quarantined',
        data: expect.objectContaining({
          runId: null,
          test: expect.objectContaining({
            id: test.id,
            quarantine: expect.objectContaining({ reason: 'quarantined as its replica died', auto: false }),
          }),
        }),
      }),
    ]);
  }, 180_000);
});
