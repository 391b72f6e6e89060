import request from 'supertest';
import { insertUser } from '../factories/user.factory.js';
import { RunningApp, TestDeployment } from '../support/app.js';
import { login } from '../support/http.js';

/** The reads behind a run's page that issue #34 changed: failure groups' keys and examples, one result's page. */
describe('A run page: failure groups that keep identifiers, with an example; one result with its attempts', () => {
  const deployment = new TestDeployment();
  let svc: RunningApp;
  let owner: string;
  let stranger: string;
  let projectId: number;

  const get = (token: string, path: string) =>
    request(svc.url).get(path).set('Authorization', `Bearer ${token}`);
  const post = (path: string, body: object) =>
    request(svc.url).post(path).set('Authorization', `Bearer ${owner}`).send(body);

  async function run(name: string, results: object[]): Promise<{ id: number; ids: number[] }> {
    const id = (await post(`/api/projects/${projectId}/runs`, { name }).expect(201)).body.id as number;
    const { ids } = (await post(`/api/runs/${id}/results`, { results }).expect(201)).body as {
      ids: number[];
    };
    await post(`/api/runs/${id}/finish`, {}).expect(200);
    return { id, ids };
  }

  beforeAll(async () => {
    [svc] = await deployment.start();
    const o = await insertUser(svc.dataSource);
    owner = (await login(svc.url, o.email, o.password)).accessToken;
    const s = await insertUser(svc.dataSource);
    stranger = (await login(svc.url, s.email, s.password)).accessToken;
    projectId = (await post('/api/projects', { key: 'RUNPAGE', name: 'Run page' }).expect(201)).body.id;
  });
  afterAll(() => deployment.stop());

  it("groups by failure signature and shows each group's first message, by id, as its example", async () => {
    const { id } = await run('nightly 7', [
      // The first by id, not the first in text order ("expected 100…" < "expected 42…").
      { name: 'adds', status: 'FAILED', message: 'expected 42 but was 41' },
      { name: 'adds again', status: 'FAILED', message: 'expected 100 but was 7' },
      { name: 'reads', status: 'BROKEN', message: 'org.opentest4j.AssertionFailedError at getLine2()' },
      { name: 'reads more', status: 'BROKEN', message: 'org.opentest4j.AssertionFailedError at getLine3()' },
      { name: 'passes', status: 'PASSED', message: 'expected 1 but was 1' },
    ]);
    const groups = await get(owner, `/api/runs/${id}/failure-groups?sort=key,asc`).expect(200);
    // Each group is a failure signature, first seen here.
    const newSignature = { signatureId: expect.any(Number), isNew: true, triage: 'TO_INVESTIGATE', issue: null };
    expect(groups.body.content).toEqual([
      {
        key: 'expected <n> but was <n>',
        count: 2,
        failed: 2,
        broken: 0,
        tests: 2,
        example: 'expected 42 but was 41',
        ...newSignature,
      },
      {
        key: 'org.opentest4j.AssertionFailedError at getLine2()',
        count: 1,
        failed: 0,
        broken: 1,
        tests: 1,
        example: 'org.opentest4j.AssertionFailedError at getLine2()',
        ...newSignature,
      },
      {
        key: 'org.opentest4j.AssertionFailedError at getLine3()',
        count: 1,
        failed: 0,
        broken: 1,
        tests: 1,
        example: 'org.opentest4j.AssertionFailedError at getLine3()',
        ...newSignature,
      },
    ]);
    const inGroup = await get(
      owner,
      `/api/runs/${id}/results?group=${encodeURIComponent('expected <n> but was <n>')}`,
    );
    expect(inGroup.body.content.map((r: { name: string }) => r.name)).toEqual(['adds', 'adds again']);
  });

  it('answers one result of a run with its attempts, and 404 for a result elsewhere, a stranger or a bad id', async () => {
    const { id, ids } = await run('retried', [
      {
        name: 'pays',
        suite: 'Checkout',
        status: 'FAILED',
        message: 'timed out',
        trace: 'at pay (pay.ts:1)',
        retry: 0,
      },
      { name: 'ships', suite: 'Checkout', status: 'PASSED', durationMs: 5 },
      {
        name: 'pays',
        suite: 'Checkout',
        status: 'PASSED',
        durationMs: 12,
        retry: 1,
        attributes: { browser: 'firefox' },
      },
    ]);
    const one = await get(owner, `/api/runs/${id}/results/${ids[2]}`).expect(200);
    expect(one.body).toEqual(
      expect.objectContaining({
        id: ids[2],
        runId: id,
        name: 'pays',
        suite: 'Checkout',
        status: 'PASSED',
        durationMs: 12,
        retry: 1,
        attributes: { browser: 'firefox' },
      }),
    );
    expect(one.body.attempts).toEqual([
      { id: ids[0], status: 'FAILED', retry: 0, durationMs: null, startedAt: null },
      { id: ids[2], status: 'PASSED', retry: 1, durationMs: 12, startedAt: null },
    ]);
    const first = await get(owner, `/api/runs/${id}/results/${ids[0]}`).expect(200);
    expect(first.body).toEqual(expect.objectContaining({ message: 'timed out', trace: 'at pay (pay.ts:1)' }));
    expect(first.body.attempts).toEqual(one.body.attempts);
    expect((await get(owner, `/api/runs/${id}/results/${ids[1]}`).expect(200)).body.attempts).toHaveLength(1);

    const other = await run('other', [{ name: 'pays', status: 'PASSED' }]);
    const elsewhere = await get(owner, `/api/runs/${other.id}/results/${ids[0]}`).expect(404);
    expect(elsewhere.body).toEqual({
      status: 404,
      error: 'Not Found',
      message: `Result ${ids[0]} not found in run ${other.id}`,
    });
    await get(stranger, `/api/runs/${id}/results/${ids[0]}`).expect(404);
    await get(owner, `/api/runs/999999999/results/${ids[0]}`).expect(404);
    for (const bad of ['abc', '1e3', '-1', '9'.repeat(19)]) {
      const res = await get(owner, `/api/runs/${id}/results/${bad}`).expect(404);
      expect(res.body).toEqual(expect.objectContaining({ status: 404, error: 'Not Found' }));
    }
    const spec = await request(svc.url).get('/v3/api-docs').expect(200);
    expect(Object.keys(spec.body.paths)).toContain('/api/runs/{runId}/results/{resultId}');
  });
});
