import { randomBytes, randomUUID } from 'node:crypto';
import request from 'supertest';
import { insertUser } from '../factories/user.factory.js';
import { RunningApp, TestDeployment } from '../support/app.js';
import { eventually, login } from '../support/http.js';
import { LiveClient } from '../support/live.js';
import { TEST_STOMP_HOST, TEST_STOMP_PORT } from '../support/services.js';

type Status = 'PASSED' | 'FAILED' | 'BROKEN' | 'SKIPPED';

interface Gate {
  status: 'PASSED' | 'FAILED' | 'PENDING' | 'OFF';
  evaluatedAt: string | null;
  conditions: { name: string; expected: number; actual: number | null; passed: boolean }[];
  ignored: { quarantined: number; knownIssues: number };
}

/**
 * The quality gate (API.md, "Quality gate"): evaluated over the project's `gate` settings when a run finishes on
 * every surface, stored on the run (every replica answers the same), announced live as `run.gate`.
 */
describe('Quality gate', () => {
  const deployment = new TestDeployment({
    SVC_BROKER_STOMP_HOST: TEST_STOMP_HOST,
    SVC_BROKER_STOMP_PORT: TEST_STOMP_PORT,
    SVC_BROKER_STOMP_LOGIN: 'guest',
    SVC_BROKER_STOMP_PASSCODE: 'guest',
    SVC_BROKER_STOMP_TOPIC: `test-${randomBytes(4).toString('hex')}.live`,
  });
  let a: RunningApp;
  let b: RunningApp;
  let owner: string;
  let token: string;
  let projectId: number;
  let stream = 0;

  const get = (path: string, as = owner, url = a.url) =>
    request(url).get(path).set('Authorization', `Bearer ${as}`);
  const post = (path: string, body: object, as = owner) =>
    request(a.url).post(path).set('Authorization', `Bearer ${as}`).send(body);
  const settle = (gate: object, as = owner) =>
    request(a.url)
      .patch(`/api/projects/${projectId}/settings`)
      .set('Authorization', `Bearer ${as}`)
      .send({ gate });
  const gateOf = async (runId: number, url = a.url): Promise<Gate> =>
    (await get(`/api/runs/${runId}/gate`, owner, url).expect(200)).body as Gate;

  /** Only these conditions set: the others not checked. */
  const only = (gate: object) =>
    settle({
      enabled: true,
      maxFailed: null,
      minPassRate: null,
      minTotal: null,
      noNewFailures: false,
      ...gate,
    }).expect(200);

  /** A V1 run of `name`'s stream with these outcomes, finished unless told: the finish's answer. */
  async function v1Run(outcomes: Record<string, Status>, opts: { stream?: string; finish?: boolean } = {}) {
    const run = (
      await post(`/api/projects/${projectId}/runs`, {
        name: 'gate run',
        stream: opts.stream ?? `s${++stream}`,
      }).expect(201)
    ).body as { id: number; gate: { status: string } };
    const results = Object.entries(outcomes).map(([name, status]) => ({ name, suite: 'S', status }));
    if (results.length) {
      await post(`/api/runs/${run.id}/results`, { results }).expect(201);
    }
    if (opts.finish === false) {
      return run;
    }
    return (await post(`/api/runs/${run.id}/finish`, {}).expect(200)).body as typeof run;
  }

  beforeAll(async () => {
    [a, b] = await deployment.start(2);
    const o = await insertUser(a.dataSource);
    owner = (await login(a.url, o.email, o.password)).accessToken;
    projectId = (await post('/api/projects', { key: 'GATE', name: 'Gate' }).expect(201)).body.id;
    token = (await post('/api/users/me/api-keys', { name: 'ci' }).expect(201)).body.token;
  });
  afterAll(() => deployment.stop());

  it('is PENDING while the run is in progress, and decided by the time V1 answers the finish', async () => {
    await settle({ enabled: true, maxFailed: 0 }).expect(200);
    const run = await v1Run({ a: 'PASSED', b: 'FAILED' }, { finish: false });
    expect(run.gate).toEqual({ status: 'PENDING' });
    expect(await gateOf(run.id)).toEqual({
      status: 'PENDING',
      evaluatedAt: null,
      conditions: [],
      ignored: { quarantined: 0, knownIssues: 0 },
    });
    expect((await get(`/api/runs/${run.id}`).expect(200)).body.gate).toEqual({ status: 'PENDING' });

    const finished = (await post(`/api/runs/${run.id}/finish`, {}).expect(200)).body;
    expect(finished.gate).toEqual({ status: 'FAILED' });
    const gate = await gateOf(run.id);
    expect(gate).toEqual({
      status: 'FAILED',
      evaluatedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      conditions: [{ name: 'maxFailed', expected: 0, actual: 1, passed: false }],
      ignored: { quarantined: 0, knownIssues: 0 },
    });
    // Stored: the other replica answers the same, and every run shape carries it.
    expect(await gateOf(run.id, b.url)).toEqual(gate);
    expect((await get(`/api/runs/${run.id}`, owner, b.url).expect(200)).body.gate).toEqual({
      status: 'FAILED',
    });
    const listed = (await get(`/api/projects/${projectId}/runs?size=100`).expect(200)).body.content;
    expect(listed.find((r: { id: number }) => r.id === run.id).gate).toEqual({ status: 'FAILED' });
  });

  it('refuses a V1 batch whose run a finish committed while it was written: the gate counts every result stored', async () => {
    await only({ maxFailed: 0 });
    const run = await v1Run({ p: 'PASSED' }, { finish: false });
    // The run's row held here, so that the finish and then the batch wait for it, in that order: the batch has read
    // the run as in progress, and comes to add its counts only once the finish has taken the row.
    const holder = a.dataSource.createQueryRunner();
    await holder.connect();
    let finished: request.Response;
    let added: request.Response;
    try {
      await holder.startTransaction();
      await holder.query('SELECT 1 FROM runs WHERE id = $1 FOR UPDATE', [run.id]);
      const finishing = post(`/api/runs/${run.id}/finish`, {}).then((r) => r);
      await waitingOnRun(1);
      const adding = post(`/api/runs/${run.id}/results`, {
        results: [{ name: 'f', suite: 'S', status: 'FAILED', message: 'late' }],
      }).then((r) => r);
      await waitingOnRun(2);
      await holder.commitTransaction();
      [finished, added] = await Promise.all([finishing, adding]);
    } finally {
      await holder.release();
    }
    expect(finished.status).toBe(200);
    expect(added.status).toBe(409);
    expect(added.body).toMatchObject({
      status: 409,
      message: `Run ${run.id} is finished; results can no longer be added`,
    });
    // Nothing of the batch stored; the run, its gate and its results agree.
    expect(finished.body.gate).toEqual({ status: 'PASSED' });
    const body = (await get(`/api/runs/${run.id}`).expect(200)).body;
    expect(body.counts).toMatchObject({ total: 1, passed: 1, failed: 0 });
    expect((await gateOf(run.id)).conditions).toEqual([
      { name: 'maxFailed', expected: 0, actual: 0, passed: true },
    ]);
    expect(
      (await get(`/api/runs/${run.id}/results`).expect(200)).body.content.map(
        (r: { name: string }) => r.name,
      ),
    ).toEqual(['p']);
  });

  /** Until `n` statements of the run's finish or of a results batch wait for a lock. */
  async function waitingOnRun(n: number): Promise<void> {
    const query = `SELECT count(*)::int AS n FROM pg_stat_activity
                    WHERE datname = current_database() AND wait_event_type = 'Lock'
                      AND (query LIKE 'UPDATE runs SET status = ''FINISHED''%' OR query LIKE 'COPY results%'
                           OR query LIKE 'UPDATE runs SET count_total%')`;
    while ((await a.dataSource.query(query))[0].n < n) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  it('maxFailed counts failed and broken outcomes, not skipped ones or failed attempts retried to a pass', async () => {
    await only({ maxFailed: 2 });
    const held = await v1Run({ a: 'FAILED', b: 'BROKEN', c: 'SKIPPED', d: 'PASSED' });
    expect(held.gate.status).toBe('PASSED');
    expect((await gateOf(held.id)).conditions).toEqual([
      { name: 'maxFailed', expected: 2, actual: 2, passed: true },
    ]);

    const run = await v1Run({ a: 'FAILED', b: 'BROKEN', c: 'BROKEN' }, { finish: false });
    // c retried to a pass: its outcome passed, so 2 failures, not 3.
    await post(`/api/runs/${run.id}/results`, {
      results: [{ name: 'c', suite: 'S', status: 'PASSED', retry: 1 }],
    }).expect(201);
    expect((await post(`/api/runs/${run.id}/finish`, {}).expect(200)).body.gate.status).toBe('PASSED');

    const over = await v1Run({ a: 'FAILED', b: 'BROKEN', c: 'FAILED' });
    expect(over.gate.status).toBe('FAILED');
    expect((await gateOf(over.id)).conditions).toEqual([
      { name: 'maxFailed', expected: 2, actual: 3, passed: false },
    ]);
  });

  it('minPassRate is the percent passed among passed, failed and broken', async () => {
    await only({ minPassRate: 75 });
    // 3 of 4 that passed or failed (skipped left out): 75 %.
    const held = await v1Run({
      a: 'PASSED',
      b: 'PASSED',
      c: 'PASSED',
      d: 'FAILED',
      e: 'SKIPPED',
      f: 'SKIPPED',
    });
    expect(await gateOf(held.id)).toMatchObject({
      status: 'PASSED',
      conditions: [{ name: 'minPassRate', expected: 75, actual: 75, passed: true }],
    });
    // 2 of 3: 66.66 %.
    const below = await v1Run({ a: 'PASSED', b: 'PASSED', c: 'BROKEN' });
    expect(await gateOf(below.id)).toMatchObject({
      status: 'FAILED',
      conditions: [{ name: 'minPassRate', expected: 75, actual: 66.66, passed: false }],
    });
  });

  it('minTotal counts the tests that ran, skipped ones included', async () => {
    await only({ minTotal: 3 });
    const held = await v1Run({ a: 'PASSED', b: 'SKIPPED', c: 'SKIPPED' });
    expect(await gateOf(held.id)).toMatchObject({
      status: 'PASSED',
      conditions: [{ name: 'minTotal', expected: 3, actual: 3, passed: true }],
    });
    const short = await v1Run({ a: 'PASSED', b: 'PASSED' });
    expect(await gateOf(short.id)).toMatchObject({
      status: 'FAILED',
      conditions: [{ name: 'minTotal', expected: 3, actual: 2, passed: false }],
    });
    // An empty run is no exception.
    expect((await v1Run({})).gate.status).toBe('FAILED');
  });

  it('noNewFailures fails a run with a failure whose signature is new in it, not one seen before', async () => {
    await only({ noNewFailures: true });
    const messages = { b: 'nnf: the basket was empty', c: 'nnf: the basket was empty', a: 'nnf: no card' };
    const withMessages = async (outcomes: Record<string, Status>) => {
      const run = (
        await post(`/api/projects/${projectId}/runs`, { name: 'gate run', stream: 'nnf' }).expect(201)
      ).body as { id: number };
      const results = Object.entries(outcomes).map(([name, status]) => ({
        name,
        suite: 'S',
        status,
        message: status === 'PASSED' ? undefined : messages[name as keyof typeof messages],
      }));
      await post(`/api/runs/${run.id}/results`, { results }).expect(201);
      await post(`/api/runs/${run.id}/finish`, {}).expect(200);
      return run;
    };
    // The project's first sight of b's failure: new, also in the stream's first run.
    const first = await withMessages({ a: 'PASSED', b: 'FAILED' });
    expect(await gateOf(first.id)).toMatchObject({
      status: 'FAILED',
      conditions: [{ name: 'noNewFailures', expected: 0, actual: 1, passed: false }],
    });
    // c newly failing, but with b's signature, seen before: nothing new.
    const still = await withMessages({ a: 'PASSED', b: 'FAILED', c: 'FAILED' });
    expect((await gateOf(still.id)).conditions).toEqual([
      { name: 'noNewFailures', expected: 0, actual: 0, passed: true },
    ]);
    const newly = await withMessages({ a: 'BROKEN', b: 'FAILED', c: 'FAILED' });
    expect(await gateOf(newly.id)).toMatchObject({
      status: 'FAILED',
      conditions: [{ name: 'noNewFailures', expected: 0, actual: 1, passed: false }],
    });
  });

  it('reports every configured condition, and none that is not set', async () => {
    await only({ maxFailed: 1, minPassRate: 50, minTotal: 2, noNewFailures: false });
    const run = await v1Run({ a: 'PASSED', b: 'FAILED', c: 'FAILED' });
    expect(await gateOf(run.id)).toMatchObject({
      status: 'FAILED',
      conditions: [
        { name: 'maxFailed', expected: 1, actual: 2, passed: false },
        { name: 'minPassRate', expected: 50, actual: 33.33, passed: false },
        { name: 'minTotal', expected: 2, actual: 3, passed: true },
      ],
    });
    await only({});
    expect(await gateOf((await v1Run({ a: 'FAILED' })).id)).toMatchObject({
      status: 'PASSED',
      conditions: [],
    });
  });

  it('is OFF when the project disabled it', async () => {
    await settle({ enabled: false, maxFailed: 0 }).expect(200);
    const run = await v1Run({ a: 'FAILED' });
    expect(run.gate.status).toBe('OFF');
    expect(await gateOf(run.id)).toEqual({
      status: 'OFF',
      evaluatedAt: expect.any(String),
      conditions: [],
      ignored: { quarantined: 0, knownIssues: 0 },
    });
  });

  it('is decided by the time an import answers, and once a V2 finish is processed', async () => {
    await only({ maxFailed: 0 });
    const xml = `<testsuite name="S"><testcase classname="S" name="a"/>
      <testcase classname="S" name="b"><failure message="boom"/></testcase></testsuite>`;
    const { runId } = (
      await request(a.url)
        .post(`/api/import/junit?projectId=${projectId}&stream=imported`)
        .set('Authorization', `Bearer ${token}`)
        .set('Content-Type', 'application/xml')
        .send(xml)
        .expect(201)
    ).body;
    expect((await get(`/api/runs/${runId}`).expect(200)).body.gate).toEqual({ status: 'FAILED' });
    expect((await gateOf(runId)).conditions).toEqual([
      { name: 'maxFailed', expected: 0, actual: 1, passed: false },
    ]);

    const uuid = randomUUID();
    await post(`/api/v2/projects/${projectId}/runs`, { uuid, name: 'v2 run', stream: 'v2' }, token).expect(
      202,
    );
    const results = [
      { uuid: randomUUID(), name: 'a', suite: 'S', status: 'PASSED' },
      { uuid: randomUUID(), name: 'b', suite: 'S', status: 'PASSED' },
    ];
    await post(`/api/v2/projects/${projectId}/runs/${uuid}/results`, { results }, token).expect(202);
    await post(`/api/v2/projects/${projectId}/runs/${uuid}/finish`, {}, token).expect(202);
    const v2 = await eventually(async () => {
      const r = await get(`/api/v2/projects/${projectId}/runs/${uuid}`, token);
      return r.status === 200 && r.body.status === 'FINISHED' ? (r.body as { id: number }) : undefined;
    });
    // Processed in one transaction with the finish, and evaluated before the message is done with: no wait.
    const gate = await eventually(async () => {
      const g = await gateOf(v2.id);
      return g.status === 'PENDING' ? undefined : g;
    });
    expect(gate.status).toBe('PASSED');

    // A V2 result processed after its run's finish moves the gate.
    const late = [{ uuid: randomUUID(), name: 'c', suite: 'S', status: 'FAILED' }];
    await post(`/api/v2/projects/${projectId}/runs/${uuid}/results`, { results: late }, token).expect(202);
    expect(await eventually(async () => ((await gateOf(v2.id)).status === 'FAILED' ? true : undefined))).toBe(
      true,
    );
  });

  it('evaluates a finished run that was never evaluated when asked for its gate', async () => {
    await only({ maxFailed: 0 });
    const run = await v1Run({ a: 'FAILED' });
    // As a run finished before the gate existed, or whose replica died between the finish and its evaluation.
    await a.dataSource.query('UPDATE runs SET gate_status = NULL, gate_evaluated_at = NULL WHERE id = $1', [
      run.id,
    ]);
    expect((await get(`/api/runs/${run.id}`).expect(200)).body.gate.status).toBe('PENDING');
    expect((await gateOf(run.id)).status).toBe('FAILED');
    expect((await get(`/api/runs/${run.id}`).expect(200)).body.gate.status).toBe('FAILED');
  });

  it('announces run.gate on the project to subscribers of every replica', async () => {
    await only({ maxFailed: 0 });
    const live = await LiveClient.subscribed(b.url, owner, projectId);
    try {
      const run = await v1Run({ a: 'PASSED', b: 'BROKEN' });
      const message = await live.next(
        (m) => m.event === 'run.gate' && (m.data as { runId: number }).runId === run.id,
      );
      expect(message).toMatchObject({
        type: 'event',
        projectId,
        event: 'run.gate',
        data: {
          runId: run.id,
          gate: {
            status: 'FAILED',
            evaluatedAt: expect.any(String),
            conditions: [{ name: 'maxFailed', expected: 0, actual: 1, passed: false }],
            ignored: { quarantined: 0, knownIssues: 0 },
          },
        },
      });
      // run.finished carries the run with its gate decided.
      const finished = await live.next(
        (m) => m.event === 'run.finished' && (m.data as { runId: number }).runId === run.id,
      );
      expect((finished.data as { run: { gate: object } }).run.gate).toEqual({ status: 'FAILED' });
    } finally {
      live.close();
    }
  });

  it('lets viewers read a gate and only maintainers change its settings, validated field by field', async () => {
    const run = await v1Run({ a: 'PASSED' });
    const member = async (role: string) => {
      const user = await insertUser(a.dataSource);
      await request(a.url)
        .put(`/api/projects/${projectId}/members/${user.id}`)
        .set('Authorization', `Bearer ${owner}`)
        .send({ role })
        .expect(200);
      return (await login(a.url, user.email, user.password)).accessToken;
    };
    const viewer = await member('VIEWER');
    const reporter = await member('REPORTER');
    const maintainer = await member('MAINTAINER');
    const stranger = await insertUser(a.dataSource);
    const outsider = (await login(a.url, stranger.email, stranger.password)).accessToken;

    expect((await get(`/api/runs/${run.id}/gate`, viewer).expect(200)).body.status).toBe('PASSED');
    expect((await get(`/api/runs/${run.id}/gate`, outsider).expect(404)).body).toEqual({
      status: 404,
      error: 'Not Found',
      message: expect.any(String),
    });
    await request(a.url).get(`/api/runs/${run.id}/gate`).expect(401);
    await get('/api/runs/999999999/gate').expect(404);

    await settle({ maxFailed: 3 }, reporter).expect(403);
    expect((await settle({ maxFailed: 3 }, maintainer).expect(200)).body.gate.maxFailed).toBe(3);
    const bad = (
      await settle({ maxFailed: -1, minPassRate: 101, minTotal: 1.5, noNewFailures: 'yes' }).expect(400)
    ).body;
    expect(bad.status).toBe(400);
    for (const field of ['gate.maxFailed', 'gate.minPassRate', 'gate.minTotal', 'gate.noNewFailures']) {
      expect(bad.message).toContain(field);
    }
    expect((await settle({ threshold: 1 }).expect(400)).body.message).toContain('gate.threshold');
  });
});
