import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { RunEntity } from '../../src/results/entities.js';
import { insertUser } from '../factories/user.factory.js';
import { RunningApp, TestDeployment } from '../support/app.js';
import { eventually, login } from '../support/http.js';
import { dropBrokerQueues, queueAdapters } from '../support/queues.js';

/**
 * A consuming replica dies (SIGKILL: no shutdown, its transaction and its unacknowledged deliveries cut off) while
 * results stream in, and a new one starts: nothing that got a 202 is lost or stored twice.
 */
describe.each(queueAdapters('test.crash'))('V2 ingest over the %s queue through a replica crash', (kind, env) => {
  const deployment = new TestDeployment(env);
  let a: RunningApp;
  let token: string;
  let projectId: number;

  beforeAll(async () => {
    [a] = await deployment.start();
    const user = await insertUser(a.dataSource);
    token = (await login(a.url, user.email, user.password)).accessToken;
    projectId = (await request(a.url).post('/api/projects').set('Authorization', `Bearer ${token}`).send({ key: `CRASH${kind.toUpperCase()}`, name: 'c' }).expect(201)).body.id;
  });
  afterAll(async () => {
    await deployment.stop();
    await dropBrokerQueues(env);
  });

  it('stores every accepted result exactly once when a consumer is killed mid-stream and another starts', async () => {
    const crashing = await deployment.startProcessReplica();
    const runUuid = randomUUID();
    const post = (url: string, path: string, body: object) =>
      request(url).post(path).set('Authorization', `Bearer ${token}`).send(body);
    await post(a.url, `/api/v2/projects/${projectId}/runs`, { uuid: runUuid, name: 'crash' }).expect(202);

    const accepted = new Set<string>();
    let stop = false;
    const stream = async () => {
      while (!stop) {
        const results = Array.from({ length: 100 }, () => ({ uuid: randomUUID(), name: `t-${randomUUID()}`, status: 'PASSED' }));
        await post(a.url, `/api/v2/projects/${projectId}/runs/${runUuid}/results`, { results }).expect(202);
        results.forEach((r) => accepted.add(r.uuid));
      }
    };
    const streams = [stream(), stream()];
    await new Promise((r) => setTimeout(r, 1_500));
    await crashing.kill('SIGKILL');
    const atCrash = accepted.size;
    const restarted = await deployment.startProcessReplica();
    await new Promise((r) => setTimeout(r, 1_000));
    stop = true;
    await Promise.all(streams);
    expect(accepted.size).toBeGreaterThan(atCrash);

    const run = (await a.dataSource.getRepository(RunEntity).findOneBy({ projectId: String(projectId), uuid: runUuid }))!;
    const stored = async () => {
      const [row]: { n: number; distinct: number; missing: number }[] = await a.dataSource.query(
        `SELECT count(*)::int AS n, count(DISTINCT uuid)::int AS distinct,
                (SELECT count(*)::int FROM unnest($2::uuid[]) AS u(uuid)
                  WHERE NOT EXISTS (SELECT 1 FROM results r WHERE r.run_id = $1 AND r.uuid = u.uuid)) AS missing
           FROM results WHERE run_id = $1`,
        [run.id, [...accepted]],
      );
      return row;
    };
    const settled = await eventually(async () => {
      const row = await stored();
      return row.missing === 0 ? row : undefined;
    }, 60_000);
    expect(settled).toEqual({ n: accepted.size, distinct: accepted.size, missing: 0 });
    const final = (await a.dataSource.getRepository(RunEntity).findOneBy({ id: run.id }))!;
    expect(final.countTotal).toBe(accepted.size);
    // The new replica came up beside the queue's leftovers (its consumer starts with it).
    await request(restarted.url).get('/api/health/ready').expect(200);
    console.info(`replica crash (${kind}): ${accepted.size} results accepted, ${atCrash} before the crash`);
  }, 120_000);
});
