import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { RunEntity } from '../../src/results/entities.js';
import { sleep, unackedOnPorts } from '../integration/queue/queue-fixtures.js';
import { insertUser } from '../factories/user.factory.js';
import { ProcessReplica, RunningApp, TestDeployment } from '../support/app.js';
import { eventually, login } from '../support/http.js';
import { tcpPortsOf } from '../support/process.js';
import { dropBrokerQueues, QueueKind, queueAdapters } from '../support/queues.js';

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
    try {
      await deployment.stop();
    } finally {
      await dropBrokerQueues(env);
    }
  });

  /** Whether the replica, frozen, holds consumed work: an open transaction (table queue) or unacknowledged deliveries. */
  async function holdsWork(replica: ProcessReplica, queue: QueueKind): Promise<boolean> {
    if (queue === 'rabbitmq') {
      return (await unackedOnPorts(tcpPortsOf(replica.pid, 5672))) > 0;
    }
    const [row]: { n: number }[] = await a.dataSource.query(
      `SELECT count(*)::int AS n FROM pg_stat_activity WHERE client_port = ANY($1::int[]) AND xact_start IS NOT NULL`,
      [tcpPortsOf(replica.pid, 5432)],
    );
    return row.n > 0;
  }

  it('stores every accepted result exactly once when a consumer is killed mid-stream and another starts', async () => {
    const crashing = await deployment.startProcessReplica();
    const runUuid = randomUUID();
    const post = (url: string, path: string, body: object) =>
      request(url).post(path).set('Authorization', `Bearer ${token}`).send(body);
    await post(a.url, `/api/v2/projects/${projectId}/runs`, { uuid: runUuid, name: 'crash' }).expect(202);

    const accepted = new Set<string>();
    const failures: string[] = [];
    let stop = false;
    const stream = async () => {
      while (!stop) {
        const results = Array.from({ length: 100 }, () => ({ uuid: randomUUID(), name: `t-${randomUUID()}`, status: 'PASSED' }));
        const res = await post(a.url, `/api/v2/projects/${projectId}/runs/${runUuid}/results`, { results }).catch((e: Error) => e);
        if (res instanceof Error || res.status !== 202) {
          failures.push(res instanceof Error ? res.message : `${res.status} ${JSON.stringify(res.body)}`);
          stop = true;
          return;
        }
        results.forEach((r) => accepted.add(r.uuid));
      }
    };
    const streams = [stream(), stream()];

    // Frozen (SIGSTOP), the replica is looked at; killed only when caught holding work, else thawed and tried again.
    let caught = false;
    for (let attempt = 0; attempt < 100 && !caught && !stop; attempt++) {
      await sleep(100);
      crashing.signal('SIGSTOP');
      caught = await holdsWork(crashing, kind);
      if (!caught) {
        crashing.signal('SIGCONT');
      }
    }
    await crashing.kill('SIGKILL');
    const atCrash = accepted.size;
    await deployment.startProcessReplica();
    await sleep(1_000);
    stop = true;
    await Promise.all(streams);
    expect(failures).toEqual([]);
    expect(caught).toBe(true);
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
    // The table queue gives a dead consumer's leased rows back when the lease (30 s) ends.
    const settled = await eventually(async () => {
      const row = await stored();
      return row.missing === 0 ? row : undefined;
    }, 90_000);
    expect(settled).toEqual({ n: accepted.size, distinct: accepted.size, missing: 0 });
    const final = (await a.dataSource.getRepository(RunEntity).findOneBy({ id: run.id }))!;
    expect(final.countTotal).toBe(accepted.size);
    console.info(`replica crash (${kind}): ${accepted.size} results accepted, ${atCrash} before the crash`);
  }, 180_000);
});
