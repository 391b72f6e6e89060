import { randomUUID } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { connect } from 'amqplib';
import request from 'supertest';
import { ResultEntity, RunEntity } from '../../src/results/entities.js';
import { insertUser } from '../factories/user.factory.js';
import { RunningApp, TestDeployment } from '../support/app.js';
import { eventually, login } from '../support/http.js';
import { dropBrokerQueues, queueAdapters } from '../support/queues.js';
import { TEST_AMQP_URL } from '../integration/queue/queue-fixtures.js';

describe.each(queueAdapters('test.ingest'))('Test results, V2 over the %s queue', (kind, env) => {
  const deployment = new TestDeployment(env);
  let a: RunningApp;
  let b: RunningApp;
  let token: string;
  let viewer: string;
  let projectId: number;

  const post = (url: string, path: string, body: object, as = token) =>
    request(url).post(path).set('Authorization', `Bearer ${as}`).send(body);
  const runOf = async (uuid: string) =>
    (await a.dataSource.getRepository(RunEntity).findOneBy({ projectId: String(projectId), uuid })) ?? undefined;

  beforeAll(async () => {
    [a, b] = await deployment.start(2);
    const user = await insertUser(a.dataSource);
    const jwt = (await login(a.url, user.email, user.password)).accessToken;
    projectId = (await post(a.url, '/api/projects', { key: `V2${kind.toUpperCase()}`, name: 'v2' }, jwt).expect(201)).body.id;
    token = (await post(a.url, '/api/users/me/api-keys', { name: 'ci' }, jwt).expect(201)).body.token;
    const v = await insertUser(a.dataSource);
    await request(a.url).put(`/api/projects/${projectId}/members/${v.id}`).set('Authorization', `Bearer ${jwt}`).send({ role: 'VIEWER' }).expect(200);
    viewer = (await login(a.url, v.email, v.password)).accessToken;
  });
  afterAll(async () => {
    try {
      await deployment.stop();
    } finally {
      await dropBrokerQueues(env);
    }
  });

  it('accepts a run, results and a finish with 202 and processes them', async () => {
    const uuid = randomUUID().toUpperCase();
    const accepted = await post(a.url, `/api/v2/projects/${projectId}/runs`, { uuid, name: 'stream' }).expect(202);
    expect(accepted.body).toEqual({ uuid: uuid.toLowerCase() });
    const results = Array.from({ length: 20 }, (_, i) => ({ uuid: randomUUID(), name: `t${i}`, suite: 'S', status: i % 4 ? 'PASSED' : 'FAILED' }));
    const res = await post(b.url, `/api/v2/projects/${projectId}/runs/${uuid}/results`, { results }).expect(202);
    expect(res.body.uuids).toEqual(results.map((r) => r.uuid));
    await post(a.url, `/api/v2/projects/${projectId}/runs/${uuid}/finish`, {}).expect(202);

    const status = await eventually(async () => {
      const r = await request(a.url).get(`/api/v2/projects/${projectId}/runs/${uuid}`).set('Authorization', `Bearer ${viewer}`);
      return r.status === 200 && r.body.status === 'FINISHED' && r.body.counts.total === 20 ? r.body : undefined;
    });
    expect(status).toEqual({ uuid: uuid.toLowerCase(), id: expect.any(Number), status: 'FINISHED', counts: { total: 20, passed: 15, failed: 5, broken: 0, skipped: 0, passedOnRetry: 0, attempts: 20 } });
    // The same run through V1, by its numeric id; and its V2 status read with the reporter's API token too.
    await request(a.url).get(`/api/runs/${status.id}`).set('Authorization', `Bearer ${viewer}`).expect(200);
    expect((await request(b.url).get(`/api/v2/projects/${projectId}/runs/${uuid}`).set('Authorization', `Bearer ${token}`).expect(200)).body).toEqual(status);
  });

  it('queues a batch as sent (any spacing, upper-case UUIDs) and stores it with lower-case UUIDs', async () => {
    const uuid = randomUUID();
    await post(a.url, `/api/v2/projects/${projectId}/runs`, { uuid, name: 'as sent' }).expect(202);
    const results = Array.from({ length: 3 }, (_, i) => ({ uuid: randomUUID().toUpperCase(), name: `tab\there ${i}`, status: 'PASSED' }));
    const body = `\n  ${JSON.stringify({ results }, null, 2)}\n`;
    const res = await request(a.url)
      .post(`/api/v2/projects/${projectId}/runs/${uuid}/results`)
      .set('Authorization', `Bearer ${token}`)
      .set('Content-Type', 'application/json')
      .send(body)
      .expect(202);
    expect(res.body.uuids).toEqual(results.map((r) => r.uuid.toLowerCase()));
    const run = await eventually(async () => {
      const r = await runOf(uuid);
      return r && r.countTotal === 3 ? r : undefined;
    });
    const stored = await a.dataSource.getRepository(ResultEntity).find({ where: { runId: run.id }, order: { id: 'ASC' } });
    expect(stored.map((r) => [r.uuid, r.name])).toEqual(results.map((r) => [r.uuid.toLowerCase(), r.name]));
  });

  it.each([
    ['UTF-8 with a byte-order mark', 'application/json', (json: string) => Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(json)]), {}],
    ['UTF-16', 'application/json; charset=utf-16le', (json: string) => Buffer.from(json, 'utf16le'), {}],
    ['gzip-encoded', 'application/json', (json: string) => gzipSync(json), { 'Content-Encoding': 'gzip' }],
  ] as const)('stores a batch sent as %s, as the parser read it', async (_what, type, encode, headers) => {
    const uuid = randomUUID();
    await post(a.url, `/api/v2/projects/${projectId}/runs`, { uuid, name: 'encoded' }).expect(202);
    const results = [{ uuid: randomUUID(), name: 'déjà vu ✓', status: 'FAILED', message: 'expected "a"' }];
    // fetch, not supertest: superagent would serialise a Buffer as JSON rather than send its bytes.
    const res = await fetch(`${a.url}/api/v2/projects/${projectId}/runs/${uuid}/results`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': type, ...headers },
      body: encode(JSON.stringify({ results })),
    });
    expect([res.status, await res.json()]).toEqual([202, { uuids: [results[0].uuid] }]);
    const run = await eventually(async () => {
      const r = await runOf(uuid);
      return r && r.countTotal === 1 ? r : undefined;
    });
    const stored = await a.dataSource.getRepository(ResultEntity).find({ where: { runId: run.id } });
    expect(stored.map((r) => [r.uuid, r.name, r.message])).toEqual([[results[0].uuid, results[0].name, results[0].message]]);
  });

  it('stores a batch with bytes that are not UTF-8 as the parser read them (U+FFFD), not as sent', async () => {
    const uuid = randomUUID();
    await post(a.url, `/api/v2/projects/${projectId}/runs`, { uuid, name: 'not utf-8' }).expect(202);
    const result = randomUUID();
    const [before, after] = JSON.stringify({ results: [{ uuid: result, name: 'bad @ byte', status: 'PASSED' }] }).split('@');
    const res = await fetch(`${a.url}/api/v2/projects/${projectId}/runs/${uuid}/results`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
      body: Buffer.concat([Buffer.from(before), Buffer.from([0xff]), Buffer.from(after)]),
    });
    expect([res.status, await res.json()]).toEqual([202, { uuids: [result] }]);
    const run = await eventually(async () => {
      const r = await runOf(uuid);
      return r && r.countTotal === 1 ? r : undefined;
    });
    const stored = await a.dataSource.getRepository(ResultEntity).find({ where: { runId: run.id } });
    expect(stored.map((r) => r.name)).toEqual(['bad \uFFFD byte']);
  });

  it('answers 404 for a run not processed (or never sent)', async () => {
    await request(a.url).get(`/api/v2/projects/${projectId}/runs/${randomUUID()}`).set('Authorization', `Bearer ${viewer}`).expect(404);
    await request(a.url).get(`/api/v2/projects/${projectId}/runs/not-a-uuid`).set('Authorization', `Bearer ${viewer}`).expect(400);
  });

  it('stores one row for the same UUID sent 50 times in parallel', async () => {
    const uuid = randomUUID();
    await post(a.url, `/api/v2/projects/${projectId}/runs`, { uuid, name: 'idem' }).expect(202);
    const result = { uuid: randomUUID(), name: 'once', status: 'PASSED' };
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, i) => post(i % 2 ? a.url : b.url, `/api/v2/projects/${projectId}/runs`, { uuid, name: 'idem' })),
    );
    expect(answers.every((r) => r.status === 202)).toBe(true);
    await Promise.all(
      Array.from({ length: 50 }, (_, i) => post(i % 2 ? a.url : b.url, `/api/v2/projects/${projectId}/runs/${uuid}/results`, { results: [result] }).expect(202)),
    );
    const run = await eventually(async () => {
      const r = await runOf(uuid);
      return r && r.countTotal >= 1 ? r : undefined;
    });
    await new Promise((r) => setTimeout(r, 1_000));
    expect(await a.dataSource.getRepository(RunEntity).countBy({ projectId: String(projectId), uuid })).toBe(1);
    expect(await a.dataSource.getRepository(ResultEntity).countBy({ uuid: result.uuid })).toBe(1);
    expect((await runOf(uuid))!.countTotal).toBe(1);
    expect(run.name).toBe('idem');
  });

  it('keeps results and a finish that arrive before their run and joins them when it comes', async () => {
    const uuid = randomUUID();
    const results = [{ uuid: randomUUID(), name: 'early', status: 'BROKEN' }];
    await post(a.url, `/api/v2/projects/${projectId}/runs/${uuid}/results`, { results }).expect(202);
    await post(a.url, `/api/v2/projects/${projectId}/runs/${uuid}/finish`, {}).expect(202);
    await new Promise((r) => setTimeout(r, 500));
    expect(await runOf(uuid)).toBeUndefined();
    await post(b.url, `/api/v2/projects/${projectId}/runs`, { uuid, name: 'late run' }).expect(202);
    const run = await eventually(async () => {
      const r = await runOf(uuid);
      return r && r.status === 'FINISHED' ? r : undefined;
    });
    expect(run.countBroken).toBe(1);
  });

  it('refuses malformed or unauthorised input at the door, queueing nothing', async () => {
    const uuid = randomUUID();
    const bad = await post(a.url, `/api/v2/projects/${projectId}/runs`, { uuid: 'nope', name: 'x' }).expect(400);
    expect(bad.body.message).toMatch(/uuid/);
    const items = await post(a.url, `/api/v2/projects/${projectId}/runs/${uuid}/results`, {
      results: [{ uuid: randomUUID(), name: 'ok', status: 'PASSED' }, { name: 'no uuid', status: 'PASSED' }],
    }).expect(400);
    expect(items.body.message).toMatch(/results\.1\.uuid/);
    await post(a.url, `/api/v2/projects/${projectId}/runs/not-a-uuid/results`, { results: [{ uuid: randomUUID(), name: 'x', status: 'PASSED' }] }).expect(400);
    // PostgreSQL text cannot hold NUL: refused here rather than failing in the consumer.
    const nul = await post(a.url, `/api/v2/projects/${projectId}/runs/${uuid}/results`, {
      results: [{ uuid: randomUUID(), name: 'ok', status: 'PASSED' }, { uuid: randomUUID(), name: 'x', status: 'PASSED', message: 'a\u0000b' }],
    }).expect(400);
    expect(nul.body.message).toMatch(/results\.1\.message/);
    // Nor what PostgreSQL could not read or store: a 202 for it would end in the dead-letter queue.
    const refused: [string, object, RegExp][] = [
      ['', { uuid, name: 'x', startedAt: '2016-12-31T23:59:60Z' }, /startedAt/],
      ['', { uuid, name: 'x', startedAt: '2009-W53-7' }, /startedAt/],
      ['', { uuid, name: '  ' }, /name must not be blank/],
      ['', { uuid, name: '\uFE0F'.repeat(501) }, /name must be shorter than or equal to 500 characters/],
      ['', { uuid, name: 'x', attributes: { k: '\ud800' } }, /attributes/],
      ['', { uuid: `urn:uuid:${uuid}`, name: 'x' }, /uuid must be a UUID/],
      [`/${uuid}/results`, { results: [{ uuid: `urn:uuid:${randomUUID()}`, name: 'x', status: 'PASSED' }] }, /results\.0\.uuid/],
      [`/${uuid}/results`, { results: [{ uuid: randomUUID(), name: 'x', status: 'PASSED', startedAt: '9999-12-31T23:59:59-23:59' }] }, /results\.0\.startedAt/],
      [`/${uuid}/results`, { results: [{ uuid: randomUUID(), name: 'x', status: 'PASSED', attributes: { k: '\udc00' } }] }, /results\.0\.attributes\.k/],
      [`/${uuid}/finish`, { finishedAt: '20261122T101500Z' }, /finishedAt/],
    ];
    for (const [path, body, message] of refused) {
      const res = await post(a.url, `/api/v2/projects/${projectId}/runs${path}`, body).expect(400);
      expect(res.body).toEqual({ status: 400, error: 'Bad Request', message: expect.stringMatching(message) });
    }
    const many = Array.from({ length: 5001 }, () => ({ uuid: randomUUID(), name: 'x', status: 'PASSED' }));
    await post(a.url, `/api/v2/projects/${projectId}/runs/${uuid}/results`, { results: many }).expect(400);
    await post(a.url, `/api/v2/projects/${projectId}/runs`, { uuid, name: 'viewer' }, viewer).expect(403);
    await post(a.url, '/api/v2/projects/99999999/runs', { uuid, name: 'nowhere' }).expect(404);
    await new Promise((r) => setTimeout(r, 800));
    expect(await runOf(uuid)).toBeUndefined();
    const pending: { n: string }[] = await a.dataSource.query('SELECT count(*) AS n FROM pending_ingest WHERE run_uuid = $1', [uuid]);
    expect(Number(pending[0].n)).toBe(0);
  });

  it('shares the work of many batches between two replicas, storing each result once', async () => {
    const uuid = randomUUID();
    await post(a.url, `/api/v2/projects/${projectId}/runs`, { uuid, name: 'bulk' }).expect(202);
    const batches = Array.from({ length: 20 }, (_, n) =>
      Array.from({ length: 100 }, (_, i) => ({ uuid: randomUUID(), name: `b${n}-t${i}`, suite: 'Bulk', status: 'PASSED' })),
    );
    await Promise.all(batches.map((results, i) => post(i % 2 ? a.url : b.url, `/api/v2/projects/${projectId}/runs/${uuid}/results`, { results }).expect(202)));
    const run = await eventually(async () => {
      const r = await runOf(uuid);
      return r && r.countTotal === 2000 ? r : undefined;
    }, 30_000);
    expect(await a.dataSource.getRepository(ResultEntity).countBy({ runId: run.id })).toBe(2000);
  });

  it('moves a message that keeps failing to the dead-letter store with its last error, and counts it in /metrics', async () => {
    const deadLettered = async () => {
      let sum = 0;
      for (const replica of [a, b]) {
        const text = (await request(replica.url).get('/metrics').expect(200)).text;
        sum += Number(/^tms_ingest_dead_lettered_messages (\d+)/m.exec(text)?.[1] ?? NaN);
      }
      return sum;
    };
    const before = await deadLettered();
    expect(before).not.toBeNaN();
    // Past the door, as a message from an older version or another producer could be: its uuid can never be stored.
    const poison = JSON.stringify({ kind: 'run', projectId: String(projectId), uuid: 'not-a-uuid', name: 'poison' });
    const good = randomUUID();
    if (kind === 'rabbitmq') {
      const connection = await connect(TEST_AMQP_URL);
      const channel = await connection.createConfirmChannel();
      channel.sendToQueue(env.SVC_BROKER_QUEUE, Buffer.from(poison), { persistent: true });
      await channel.waitForConfirms();
      await connection.close();
    } else {
      await a.dataSource.query('INSERT INTO ingest_queue (payload) VALUES ($1)', [poison]);
    }
    await post(a.url, `/api/v2/projects/${projectId}/runs`, { uuid: good, name: 'beside the poison' }).expect(202);
    /** The poison's last error once it is in the dead-letter store. */
    const deadPoison = async (): Promise<string | undefined> => {
      if (kind === 'postgres') {
        const rows: { last_error: string }[] = await a.dataSource.query(
          'SELECT last_error FROM ingest_queue WHERE dead_at IS NOT NULL AND payload = $1',
          [poison],
        );
        return rows[0]?.last_error;
      }
      const connection = await connect(TEST_AMQP_URL);
      try {
        const channel = await connection.createChannel();
        for (let m = await channel.get(`${env.SVC_BROKER_QUEUE}.dead`); m; m = await channel.get(`${env.SVC_BROKER_QUEUE}.dead`)) {
          if (m.content.toString() === poison) {
            return String(m.properties.headers?.['x-last-error']);
          }
        }
        return undefined;
      } finally {
        await connection.close(); // unacknowledged: the dead letters stay where they were
      }
    };
    expect(await eventually(deadPoison, 60_000)).toMatch(/uuid/);
    await eventually(async () => ((await deadLettered()) >= before + 1 ? true : undefined), 10_000);
    expect(await runOf(good)).toBeDefined();
  });
});
