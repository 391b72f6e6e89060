import request from 'supertest';
import { ResultEntity } from '../../src/results/entities.js';
import { insertUser } from '../factories/user.factory.js';
import { RunningApp, TestDeployment } from '../support/app.js';
import { login } from '../support/http.js';

describe('Test results, V1', () => {
  const deployment = new TestDeployment();
  let svc: RunningApp;
  let owner: string;
  let reporterToken: string;
  let viewer: string;
  let stranger: string;
  let projectId: number;

  const api = (token: string) => ({
    get: (path: string) => request(svc.url).get(path).set('Authorization', `Bearer ${token}`),
    post: (path: string, body: object) => request(svc.url).post(path).set('Authorization', `Bearer ${token}`).send(body),
    delete: (path: string) => request(svc.url).delete(path).set('Authorization', `Bearer ${token}`),
  });

  async function member(role?: string): Promise<string> {
    const user = await insertUser(svc.dataSource);
    const jwt = (await login(svc.url, user.email, user.password)).accessToken;
    if (role) {
      await request(svc.url).put(`/api/projects/${projectId}/members/${user.id}`).set('Authorization', `Bearer ${owner}`).send({ role }).expect(200);
    }
    return jwt;
  }

  beforeAll(async () => {
    [svc] = await deployment.start();
    const o = await insertUser(svc.dataSource);
    owner = (await login(svc.url, o.email, o.password)).accessToken;
    projectId = (await api(owner).post('/api/projects', { key: 'RES', name: 'Results' }).expect(201)).body.id;
    const reporterJwt = await member('REPORTER');
    reporterToken = (await api(reporterJwt).post('/api/users/me/api-keys', { name: 'ci' }).expect(201)).body.token;
    viewer = await member('VIEWER');
    stranger = await member();
  });
  afterAll(() => deployment.stop());

  it('takes a run, results in input order, and keeps counts', async () => {
    const run = await api(reporterToken)
      .post(`/api/projects/${projectId}/runs`, { name: 'nightly', attributes: { branch: 'main', commit: 'a1' } })
      .expect(201);
    expect(run.body).toEqual(
      expect.objectContaining({ id: expect.any(Number), projectId, name: 'nightly', status: 'IN_PROGRESS', finishedAt: null }),
    );
    const results = [
      { name: 'login works', suite: 'Auth', status: 'PASSED', durationMs: 12 },
      { name: 'logout works', suite: 'Auth', status: 'FAILED', message: 'expected 204', trace: 'at x' },
      { name: 'db down', suite: 'Ops', status: 'BROKEN' },
      { name: 'later', suite: 'Ops', status: 'SKIPPED', attributes: { reason: 'flaky env' } },
    ];
    const added = await api(reporterToken).post(`/api/runs/${run.body.id}/results`, { results }).expect(201);
    expect(added.body.ids).toHaveLength(4);
    const stored = await svc.dataSource.getRepository(ResultEntity).findBy({ runId: String(run.body.id) });
    for (const [i, id] of added.body.ids.entries()) {
      expect(stored.find((r) => Number(r.id) === id)?.name).toBe(results[i].name);
    }
    const got = await api(viewer).get(`/api/runs/${run.body.id}`).expect(200);
    expect(got.body.counts).toEqual({ total: 4, passed: 1, failed: 1, broken: 1, skipped: 1 });

    const failed = await api(viewer).get(`/api/runs/${run.body.id}/results?status=FAILED`).expect(200);
    expect(failed.body.content).toEqual([
      expect.objectContaining({ name: 'logout works', suite: 'Auth', status: 'FAILED', message: 'expected 204', trace: 'at x', retry: 0 }),
    ]);

    const finished = await api(reporterToken).post(`/api/runs/${run.body.id}/finish`, {}).expect(200);
    expect(finished.body.status).toBe('FINISHED');
    await api(reporterToken).post(`/api/runs/${run.body.id}/results`, { results: [results[0]] }).expect(409);
  });

  it('refuses a whole batch when one item is invalid, naming index and field, and stores nothing', async () => {
    const run = await api(reporterToken).post(`/api/projects/${projectId}/runs`, { name: 'bad batch' }).expect(201);
    const res = await api(reporterToken)
      .post(`/api/runs/${run.body.id}/results`, {
        results: [
          { name: 'fine', status: 'PASSED' },
          { name: 'bad', status: 'GREEN' },
          { name: '', status: 'PASSED', extra: 1 },
        ],
      })
      .expect(400);
    expect(res.body.message).toMatch(/results\.1\.status/);
    expect(res.body.message).toMatch(/results\.2\.name/);
    expect(res.body.message).toMatch(/extra/);
    expect(await svc.dataSource.getRepository(ResultEntity).countBy({ runId: String(run.body.id) })).toBe(0);
    const tooMany = Array.from({ length: 1001 }, (_, i) => ({ name: `t${i}`, status: 'PASSED' }));
    expect((await api(reporterToken).post(`/api/runs/${run.body.id}/results`, { results: tooMany }).expect(400)).body.message).toMatch(/1000/);
  });

  it('keeps counts right under concurrent writers of one run', async () => {
    const run = await api(reporterToken).post(`/api/projects/${projectId}/runs`, { name: 'parallel' }).expect(201);
    await Promise.all(
      Array.from({ length: 8 }, (_, w) =>
        api(reporterToken)
          .post(`/api/runs/${run.body.id}/results`, {
            results: Array.from({ length: 50 }, (_, i) => ({ name: `w${w}-t${i}`, suite: 'P', status: i % 5 === 0 ? 'FAILED' : 'PASSED' })),
          })
          .expect(201),
      ),
    );
    const got = await api(viewer).get(`/api/runs/${run.body.id}`).expect(200);
    expect(got.body.counts).toEqual({ total: 400, passed: 320, failed: 80, broken: 0, skipped: 0 });
  });

  it('tracks test cases, history and flakiness across runs', async () => {
    const runIds: number[] = [];
    for (const [i, status] of ['PASSED', 'FAILED', 'PASSED'].entries()) {
      const run = await api(reporterToken).post(`/api/projects/${projectId}/runs`, { name: `history-${i}`, attributes: { commit: 'same' } }).expect(201);
      runIds.push(run.body.id);
      await api(reporterToken)
        .post(`/api/runs/${run.body.id}/results`, {
          results: [
            { name: 'sometimes', suite: 'Flaky', status },
            { name: 'always', suite: 'Stable', status: 'PASSED' },
          ],
        })
        .expect(201);
    }
    const tests = await api(viewer).get(`/api/projects/${projectId}/tests?q=flaky`).expect(200);
    expect(tests.body.content).toEqual([{ id: expect.any(Number), suite: 'Flaky', name: 'sometimes', lastStatus: 'PASSED', flaky: true }]);
    const stable = await api(viewer).get(`/api/projects/${projectId}/tests?q=Stable`).expect(200);
    expect(stable.body.content[0].flaky).toBe(false);

    const history = await api(viewer).get(`/api/projects/${projectId}/tests/${tests.body.content[0].id}/history`).expect(200);
    expect(history.body.content.map((h: { runName: string; status: string }) => [h.runName, h.status])).toEqual([
      ['history-2', 'PASSED'],
      ['history-1', 'FAILED'],
      ['history-0', 'PASSED'],
    ]);
    await api(viewer).get(`/api/projects/${projectId}/tests/999999/history`).expect(404);
  });

  it('marks a test that passed only on retry as flaky, and honours an explicit testId', async () => {
    const run = await api(reporterToken).post(`/api/projects/${projectId}/runs`, { name: 'retry' }).expect(201);
    await api(reporterToken)
      .post(`/api/runs/${run.body.id}/results`, {
        results: [
          { testId: 'T-1', name: 'renamed test', suite: 'R', status: 'FAILED' },
          { testId: 'T-1', name: 'renamed test again', suite: 'R', status: 'PASSED', retry: 1 },
        ],
      })
      .expect(201);
    const tests = await api(viewer).get(`/api/projects/${projectId}/tests?q=renamed`).expect(200);
    expect(tests.body.totalElements).toBe(1);
    expect(tests.body.content[0]).toEqual(expect.objectContaining({ name: 'renamed test again', flaky: true, lastStatus: 'PASSED' }));
  });

  it('pages, sorts and filters the run list; bad parameters are 400', async () => {
    const page = await api(viewer).get(`/api/projects/${projectId}/runs?size=2&sort=name,asc`).expect(200);
    expect(page.body.content).toHaveLength(2);
    expect(page.body.totalElements).toBeGreaterThanOrEqual(5);
    const names = page.body.content.map((r: { name: string }) => r.name);
    expect([...names].sort()).toEqual(names);
    for (const q of ['?sort=counts,asc', '?size=0', '?page=-1', '?status=PASSED']) {
      await api(viewer).get(`/api/projects/${projectId}/runs${q}`).expect(400);
    }
  });

  it('checks roles: VIEWER reads, REPORTER writes, MAINTAINER deletes; strangers see 404', async () => {
    const run = await api(reporterToken).post(`/api/projects/${projectId}/runs`, { name: 'roles' }).expect(201);
    await api(viewer).post(`/api/projects/${projectId}/runs`, { name: 'x' }).expect(403);
    await api(viewer).post(`/api/runs/${run.body.id}/results`, { results: [{ name: 'x', status: 'PASSED' }] }).expect(403);
    await api(reporterToken).delete(`/api/runs/${run.body.id}`).expect(403);
    const s = await api(stranger).get(`/api/runs/${run.body.id}`).expect(404);
    expect(s.body.message).toBe(`Run ${run.body.id} not found`);
    await api(stranger).post(`/api/runs/${run.body.id}/results`, { results: [{ name: 'x', status: 'PASSED' }] }).expect(404);
    await api(stranger).get(`/api/projects/${projectId}/runs`).expect(404);
    await api(owner).delete(`/api/runs/${run.body.id}`).expect(204);
    await api(owner).get(`/api/runs/${run.body.id}`).expect(404);
    await api(owner).get('/api/runs/abc').expect(404);
  });
});
