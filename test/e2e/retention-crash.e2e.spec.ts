import request from 'supertest';
import { insertUser } from '../factories/user.factory.js';
import { RunningApp, TestDeployment } from '../support/app.js';
import { eventually, login } from '../support/http.js';
import { addBulkResults } from '../support/bulk-results.js';

/**
 * A replica killed (SIGKILL: no shutdown, its batch cut off) while it purges a deleted run: every read in between
 * shows the run gone and nothing of it, the other runs whole; a replica started after resumes the purge.
 */
describe('Retention purge through a replica crash', () => {
  // Small batches with long pauses: the purge of 20,000 results takes ~8 s, long enough to be killed in.
  // The purge poll of 1 h: only a replica's start (or a deletion it answered) sets it to work.
  const deployment = new TestDeployment({
    SVC_RETENTION_BATCH: '500',
    SVC_RETENTION_PAUSE_MS: '200',
    SVC_RETENTION_PURGE_POLL: '1h',
  });
  let a: RunningApp;
  let jwt: string;

  beforeAll(async () => {
    [a] = await deployment.start();
    const user = await insertUser(a.dataSource);
    jwt = (await login(a.url, user.email, user.password)).accessToken;
  });
  afterAll(() => deployment.stop());

  const get = (path: string) => request(a.url).get(path).set('Authorization', `Bearer ${jwt}`);
  const stored = async (runId: number) =>
    Number((await a.dataSource.query('SELECT count(*) AS n FROM results WHERE run_id = $1', [runId]))[0].n);

  it('leaves nothing half-deleted that a read could see, and the next replica finishes the purge', async () => {
    const post = (path: string, body: object = {}) =>
      request(a.url).post(path).set('Authorization', `Bearer ${jwt}`).send(body);
    const p = (await post('/api/projects', { key: 'CRASHRET', name: 'crash' }).expect(201)).body.id as number;
    const newRun = async (name: string, results: object[]) => {
      const run = (await post(`/api/projects/${p}/runs`, { name }).expect(201)).body.id as number;
      await post(`/api/runs/${run}/results`, { results }).expect(201);
      await post(`/api/runs/${run}/finish`).expect(200);
      return run;
    };
    const kept = await newRun('kept', [
      { name: 'shared', suite: 'S', status: 'FAILED' },
      { name: 'own', suite: 'S', status: 'PASSED' },
    ]);
    const doomed = await newRun('doomed', [{ name: 'shared', suite: 'S', status: 'PASSED' }]);
    // The rest of the doomed run's 20,000 results, each its own test case, stored directly (setup, not the subject).
    await addBulkResults(a.dataSource, { projectId: p, runId: doomed, count: 19999, identitySeed: 'crash' });
    const shared = (await get(`/api/projects/${p}/tests?q=shared`).expect(200)).body.content[0].id as number;
    expect((await get(`/api/projects/${p}/tests?size=1`).expect(200)).body.totalElements).toBe(20_001);

    const crashing = await deployment.startProcessReplica();
    await request(crashing.url)
      .delete(`/api/runs/${doomed}`)
      .set('Authorization', `Bearer ${jwt}`)
      .expect(204);
    // Killed mid-purge: some batches committed, most not.
    await eventually(async () => {
      const n = await stored(doomed);
      return n < 19_000 && n > 2_000 ? true : undefined;
    }, 60_000);
    await crashing.kill('SIGKILL');
    const left = await stored(doomed);
    expect(left).toBeGreaterThan(0);

    // What reads see: the run gone and nothing of it; the other run whole.
    await get(`/api/runs/${doomed}`).expect(404);
    await get(`/api/runs/${doomed}/results`).expect(404);
    const runs = (await get(`/api/projects/${p}/runs`).expect(200)).body;
    expect(runs.content.map((r: { id: number }) => r.id)).toEqual([kept]);
    expect((await get(`/api/runs/${kept}`).expect(200)).body.counts).toMatchObject({
      total: 2,
      failed: 1,
      passed: 1,
    });
    const history = (await get(`/api/projects/${p}/tests/${shared}/history`).expect(200)).body;
    expect(history.content.map((h: { runId: number }) => h.runId)).toEqual([kept]);
    const tests = (await get(`/api/projects/${p}/tests?size=100`).expect(200)).body;
    expect(tests.totalElements).toBe(2);
    expect(tests.content.map((t: { name: string; lastStatus: string }) => [t.name, t.lastStatus])).toEqual([
      ['own', 'PASSED'],
      ['shared', 'FAILED'],
    ]);

    // A replica that starts resumes the purge, and the test cases only the run had go with it.
    const next = await deployment.startProcessReplica();
    await eventually(async () => ((await stored(doomed)) === 0 ? true : undefined), 120_000);
    await eventually(async () => {
      const [{ n }] = await a.dataSource.query(
        'SELECT count(*)::int AS n FROM test_cases WHERE project_id = $1',
        [p],
      );
      return n === 2 ? true : undefined;
    }, 60_000);
    expect((await a.dataSource.query('SELECT count(*)::int AS n FROM run_purges'))[0].n).toBe(0);
    expect((await get(`/api/projects/${p}/tests?size=100`).expect(200)).body.totalElements).toBe(2);
    await next.kill('SIGTERM');
  }, 300_000);
});
