import request from 'supertest';
import { randomUUID } from 'node:crypto';
import { ProjectEntity } from '../../src/access/entities.js';
import { ResultEntity, RunEntity } from '../../src/results/entities.js';
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
    expect(got.body.counts).toEqual({ total: 4, passed: 1, failed: 1, broken: 1, skipped: 1, passedOnRetry: 0, attempts: 4 });

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
    // Worded as every other body's rules, each problem once: an empty name is not also reported as blank, a bad
    // attribute name by its own rule only.
    const worded = await api(reporterToken)
      .post(`/api/runs/${run.body.id}/results`, {
        results: [
          { name: '', status: 'PASSED' },
          { name: 'long', status: 'PASSED', message: 'm'.repeat(65_537), testId: '' },
          { name: 'attrs', status: 'PASSED', attributes: { ['k'.repeat(101)]: 'v', '': 'v' } },
          { name: 'many', status: 'PASSED', attributes: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, 'v'])) },
        ],
      })
      .expect(400);
    expect(worded.body.message).toBe(
      [
        'results.0.name must not be empty',
        'results.1.testId must not be empty',
        'results.1.message must be shorter than or equal to 65536 characters',
        'results.2.attributes: attribute names must be at most 100 characters',
        'results.2.attributes: attribute names must not be empty',
        'results.3.attributes must hold at most 50 attributes',
      ].join('; '),
    );
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
    expect(got.body.counts).toEqual({ total: 400, passed: 320, failed: 80, broken: 0, skipped: 0, passedOnRetry: 0, attempts: 400 });
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
    expect(tests.body.content).toEqual([
      expect.objectContaining({ id: expect.any(Number), suite: 'Flaky', name: 'sometimes', lastStatus: 'PASSED', flaky: true }),
    ]);
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
    await api(viewer).post(`/api/runs/${run.body.id}/finish`, {}).expect(403);
    expect((await api(viewer).get(`/api/runs/${run.body.id}`).expect(200)).body.status).toBe('IN_PROGRESS');
    const s = await api(stranger).get(`/api/runs/${run.body.id}`).expect(404);
    expect(s.body.message).toBe(`Run ${run.body.id} not found`);
    await api(stranger).post(`/api/runs/${run.body.id}/results`, { results: [{ name: 'x', status: 'PASSED' }] }).expect(404);
    await api(stranger).get(`/api/projects/${projectId}/runs`).expect(404);
    const maintainer = await member('MAINTAINER');
    await api(maintainer).delete(`/api/runs/${run.body.id}`).expect(204);
    await api(owner).get(`/api/runs/${run.body.id}`).expect(404);
    await api(owner).get('/api/runs/abc').expect(404);
  });

  it('pages and sorts results, test cases and history, and honours the direction of sort=id', async () => {
    const run = await api(reporterToken).post(`/api/projects/${projectId}/runs`, { name: 'paging' }).expect(201);
    const results = ['c', 'a', 'e', 'b', 'd'].map((n, i) => ({ name: `pg-${n}`, suite: 'Paging', status: i % 2 ? 'FAILED' : 'PASSED', durationMs: 10 * i }));
    const { ids } = (await api(reporterToken).post(`/api/runs/${run.body.id}/results`, { results }).expect(201)).body as { ids: number[] };
    const list = async (path: string) => (await api(viewer).get(path).expect(200)).body;
    const names = (page: { content: { name: string }[] }) => page.content.map((r) => r.name);

    const byIdDesc = await list(`/api/runs/${run.body.id}/results?sort=id,desc`);
    expect(byIdDesc.content.map((r: { id: number }) => r.id)).toEqual([...ids].reverse());
    const second = await list(`/api/runs/${run.body.id}/results?sort=name,desc&size=2&page=1`);
    expect(names(second)).toEqual(['pg-c', 'pg-b']);
    expect(second).toEqual(expect.objectContaining({ page: 1, size: 2, totalElements: 5, totalPages: 3 }));
    expect(names(await list(`/api/runs/${run.body.id}/results?sort=durationMs,desc&size=1`))).toEqual(['pg-d']);
    expect(names(await list(`/api/runs/${run.body.id}/results?status=FAILED&sort=name,asc`))).toEqual(['pg-a', 'pg-b']);

    const runsAsc = (await list(`/api/projects/${projectId}/runs?sort=id,asc&size=500`)).content.map((r: { id: number }) => r.id);
    const runsDesc = (await list(`/api/projects/${projectId}/runs?sort=id,desc&size=500`)).content.map((r: { id: number }) => r.id);
    expect(runsAsc.length).toBeGreaterThan(1);
    expect(runsAsc).toEqual([...runsAsc].sort((x: number, y: number) => x - y));
    expect(runsDesc).toEqual([...runsAsc].reverse());

    const tests = await list(`/api/projects/${projectId}/tests?q=pg-&sort=name,desc&size=2&page=2`);
    expect(names(tests)).toEqual(['pg-a']);
    expect(tests.totalElements).toBe(5);

    const again = await api(reporterToken).post(`/api/projects/${projectId}/runs`, { name: 'paging again' }).expect(201);
    await api(reporterToken).post(`/api/runs/${again.body.id}/results`, { results: [results[0]] }).expect(201);
    const testId = (await list(`/api/projects/${projectId}/tests?q=pg-c`)).content[0].id;
    const history = (q: string) => list(`/api/projects/${projectId}/tests/${testId}/history${q}`);
    expect((await history('')).content.map((h: { runName: string }) => h.runName)).toEqual(['paging again', 'paging']);
    expect((await history('?sort=id,asc')).content.map((h: { runName: string }) => h.runName)).toEqual(['paging', 'paging again']);
    expect((await history('?size=1&page=1')).content.map((h: { runName: string }) => h.runName)).toEqual(['paging']);
    await api(viewer).get(`/api/projects/${projectId}/tests/${testId}/history?sort=name,asc`).expect(400);

    for (const q of ['?page=1000001', '?page=100000000000000000000', '?page=1.5', '?size=501']) {
      const res = await api(viewer).get(`/api/runs/${run.body.id}/results${q}`).expect(400);
      expect(res.body).toEqual({ status: 400, error: 'Bad Request', message: expect.stringMatching(/page|size/) });
    }
    expect((await list(`/api/runs/${run.body.id}/results?page=1000000`)).content).toEqual([]);
  });

  it('answers a result whose uuid is stored already with its stored id, storing and counting it once', async () => {
    const run = await api(reporterToken).post(`/api/projects/${projectId}/runs`, { name: 'retrying client' }).expect(201);
    const [u1, u2] = [randomUUID(), randomUUID()];
    const batch = [
      { uuid: u1, name: 'one', status: 'PASSED' },
      { uuid: u2.toUpperCase(), name: 'two', status: 'FAILED' },
      { uuid: u1, name: 'one again', status: 'PASSED' },
    ];
    const first = (await api(reporterToken).post(`/api/runs/${run.body.id}/results`, { results: batch }).expect(201)).body.ids;
    expect(first[0]).toBeGreaterThan(0);
    expect(first[2]).toBe(first[0]);
    const retry = (await api(reporterToken).post(`/api/runs/${run.body.id}/results`, { results: [...batch, { name: 'new', status: 'PASSED' }] }).expect(201)).body.ids;
    expect(retry.slice(0, 3)).toEqual(first);
    expect(retry[3]).toBeGreaterThan(Math.max(...first));
    expect((await api(viewer).get(`/api/runs/${run.body.id}`).expect(200)).body.counts).toEqual({ total: 3, passed: 2, failed: 1, broken: 0, skipped: 0, passedOnRetry: 0, attempts: 3 });

    // The same uuid sent to another run: not this run's result, so the batch is refused whole.
    const other = await api(reporterToken).post(`/api/projects/${projectId}/runs`, { name: 'another run' }).expect(201);
    const conflict = await api(reporterToken)
      .post(`/api/runs/${other.body.id}/results`, { results: [{ name: 'fresh', status: 'PASSED' }, { uuid: u2, name: 'two', status: 'FAILED' }] })
      .expect(409);
    expect(conflict.body.message).toBe(`results.1.uuid ${u2} is stored already, in run ${run.body.id}`);
    expect(await svc.dataSource.getRepository(ResultEntity).countBy({ runId: String(other.body.id) })).toBe(0);
    expect((await api(viewer).get(`/api/runs/${other.body.id}`).expect(200)).body.counts.total).toBe(0);
  });

  it('refuses timestamps, UUIDs and text PostgreSQL could not store with a 400, storing nothing', async () => {
    const runs = () => svc.dataSource.getRepository(RunEntity).countBy({ projectId: String(projectId) });
    const before = await runs();
    const badTimes = [
      '2016-12-31T23:59:60Z', // a leap second
      '0000-01-01T00:00:00Z', // year 0
      '0001-01-01T00:00:00+01:00', // year 0 in UTC
      '9999-12-31T23:59:59-23:59', // year 10000 in UTC
      '2026-02-30T00:00:00Z', // no such day
      '2026-11-22T24:00:00Z',
      '2009-W53-7', // week date
      '2009-123', // ordinal date
      '20261122T101500Z', // basic format
      '2026-11-22T10:15:00', // no offset: whose local time?
    ];
    for (const startedAt of badTimes) {
      const res = await api(reporterToken).post(`/api/projects/${projectId}/runs`, { name: 'bad time', startedAt }).expect(400);
      expect(res.body).toEqual({ status: 400, error: 'Bad Request', message: expect.stringMatching(/startedAt must be an ISO 8601 timestamp/) });
    }
    const badRuns: [object, RegExp][] = [
      [{ name: '   ' }, /name must not be blank/],
      [{ name: 'a\uFE0F'.repeat(500) }, /name must be shorter than or equal to 500 characters/],
      [{ name: 'a\u0000b' }, /name must not contain NUL/],
      [{ name: 'lone \ud800' }, /unpaired surrogates/],
      [{ name: 'x', attributes: { branch: 'a\u0000' } }, /attributes/],
      [{ name: 'x', attributes: { ['k\udc00']: 'v' } }, /attributes/],
      [{ name: 'x', attributes: { k: '\ud800' } }, /attributes/],
    ];
    for (const [body, message] of badRuns) {
      expect((await api(reporterToken).post(`/api/projects/${projectId}/runs`, body).expect(400)).body.message).toMatch(message);
    }
    expect(await runs()).toBe(before);

    const run = await api(reporterToken).post(`/api/projects/${projectId}/runs`, { name: ' fine ', startedAt: '2026-11-22T10:15:00.123456+02:00' }).expect(201);
    expect(run.body).toEqual(expect.objectContaining({ name: 'fine', startedAt: '2026-11-22T08:15:00.123Z' }));
    const ok = { name: 'ok', status: 'PASSED' };
    const badItems: [object, RegExp][] = [
      [{ ...ok, startedAt: '2016-12-31T23:59:60Z' }, /results\.1\.startedAt must be an ISO 8601 timestamp/],
      [{ ...ok, startedAt: '9999-12-31T23:59:59-23:59' }, /results\.1\.startedAt/],
      [{ ...ok, uuid: `urn:uuid:${randomUUID()}` }, /results\.1\.uuid must be a UUID/],
      [{ ...ok, message: 'lone \ud800 surrogate' }, /results\.1\.message must not contain NUL characters or unpaired surrogates/],
      [{ ...ok, attributes: { k: '\udfff' } }, /results\.1\.attributes\.k/],
      [{ ...ok, name: ' \t ' }, /results\.1\.name must not be blank/],
    ];
    for (const [item, message] of badItems) {
      const res = await api(reporterToken).post(`/api/runs/${run.body.id}/results`, { results: [ok, item] }).expect(400);
      expect(res.body.message).toMatch(message);
    }
    expect(await svc.dataSource.getRepository(ResultEntity).countBy({ runId: String(run.body.id) })).toBe(0);
    const results = await api(reporterToken)
      .post(`/api/runs/${run.body.id}/results`, { results: [{ ...ok, startedAt: '2026-11-22', attributes: { emoji: '\ud83d\ude00' } }] })
      .expect(201);
    const [stored] = (await api(viewer).get(`/api/runs/${run.body.id}/results`).expect(200)).body.content;
    expect(stored).toEqual(expect.objectContaining({ id: results.body.ids[0], startedAt: '2026-11-22T00:00:00.000Z', attributes: { emoji: '😀' } }));

    for (const finishedAt of ['2016-12-31T23:59:60Z', '2009-W53-7']) {
      expect((await api(reporterToken).post(`/api/runs/${run.body.id}/finish`, { finishedAt }).expect(400)).body.message).toMatch(/finishedAt/);
    }
    expect((await api(viewer).get(`/api/runs/${run.body.id}`).expect(200)).body.status).toBe('IN_PROGRESS');
  });

  it('answers a value PostgreSQL refuses that no validator caught with a 400, not a 500', async () => {
    const projects = () => svc.dataSource.getRepository(ProjectEntity).count();
    const before = await projects();
    const res = await api(owner).post('/api/projects', { key: 'NUL', name: 'a\u0000b' }).expect(400);
    expect(res.body).toEqual({ status: 400, error: 'Bad Request', message: expect.any(String) });
    expect(await projects()).toBe(before);
  });

  it('stores a batch PostgreSQL rolled back for a deadlock with another writer by writing it again: 201, not 503', async () => {
    const newRun = async () =>
      (await api(reporterToken).post(`/api/projects/${projectId}/runs`, { name: 'deadlocked' }).expect(201)).body
        .id as number;
    const [first, second] = [await newRun(), await newRun()];
    const failing = { name: 'locked out', suite: 'Deadlock', status: 'FAILED' };
    // A failing test: its next failure updates its health row.
    await api(reporterToken).post(`/api/runs/${first}/results`, { results: [failing] }).expect(201);
    const [{ id: testId }]: { id: string }[] = await svc.dataSource.query(
      `SELECT id FROM test_cases WHERE project_id = $1 AND name = 'locked out'`,
      [projectId],
    );
    const uuid = randomUUID();
    const other = svc.dataSource.createQueryRunner();
    await other.connect();
    try {
      await other.startTransaction();
      // The batch's writer looks for the deadlock first (after 1 s) and is the one rolled back.
      await other.query(`SET LOCAL deadlock_timeout = '10s'`);
      await other.query('SELECT 1 FROM test_health WHERE test_id = $1 FOR UPDATE', [testId]);
      const posted = api(reporterToken)
        .post(`/api/runs/${second}/results`, { results: [{ ...failing, uuid }] })
        .then((response) => response);
      // (A failure of a test failing steadily is applied by the batch's read of test health: an UPDATE in its WITH.)
      await waitingOnLock('%UPDATE test_health%');
      // The batch holds its result's UUID and waits for the health row; this transaction now waits for the UUID.
      await other.query(
        `INSERT INTO results (run_id, project_id, test_id, uuid, name, status, outcome)
         VALUES ($1, $2, $3, $4, 'locked out', 'FAILED', false)`,
        [first, projectId, testId, uuid],
      );
      // The batch was rolled back (the insert went through); its second try waits for this transaction's end.
      await other.rollbackTransaction();
      const response = await posted;
      expect(response.status).toBe(201);
      const stored: { run_id: string }[] = await svc.dataSource.query(
        'SELECT run_id FROM results WHERE project_id = $1 AND uuid = $2',
        [projectId, uuid],
      );
      expect(stored).toEqual([{ run_id: String(second) }]);
    } finally {
      await other.release();
    }
  });

  async function waitingOnLock(pattern: string): Promise<void> {
    const query = `SELECT 1 FROM pg_stat_activity
                    WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE $1`;
    while (!(await svc.dataSource.query(query, [pattern])).length) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }
});
