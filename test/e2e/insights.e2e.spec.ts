import request from 'supertest';
import type { QueryRunner } from 'typeorm';
import { insertUser } from '../factories/user.factory.js';
import { RunningApp, TestDeployment } from '../support/app.js';
import { login } from '../support/http.js';

type Item = {
  name: string;
  suite?: string;
  status: string;
  message?: string;
  durationMs?: number;
  retry?: number;
};

describe('The reads behind the web pages: project summaries, filters, failure groups, comparison, trend', () => {
  const deployment = new TestDeployment();
  let svc: RunningApp;
  let owner: string;
  let stranger: string;
  let projectId: number;
  let otherProjectId: number;

  const api = (token: string) => ({
    get: (path: string) => request(svc.url).get(path).set('Authorization', `Bearer ${token}`),
    post: (path: string, body: object) =>
      request(svc.url).post(path).set('Authorization', `Bearer ${token}`).send(body),
  });

  async function run(
    name: string,
    items: Item[],
    opts: { attributes?: Record<string, string>; project?: number; finish?: boolean } = {},
  ): Promise<number> {
    const created = await api(owner)
      .post(`/api/projects/${opts.project ?? projectId}/runs`, { name, attributes: opts.attributes ?? {} })
      .expect(201);
    const id = created.body.id as number;
    for (let i = 0; i < items.length; i += 1000) {
      await api(owner)
        .post(`/api/runs/${id}/results`, { results: items.slice(i, i + 1000) })
        .expect(201);
    }
    if (opts.finish !== false) {
      await api(owner).post(`/api/runs/${id}/finish`, {}).expect(200);
    }
    return id;
  }

  beforeAll(async () => {
    [svc] = await deployment.start();
    const o = await insertUser(svc.dataSource);
    owner = (await login(svc.url, o.email, o.password)).accessToken;
    const s = await insertUser(svc.dataSource);
    stranger = (await login(svc.url, s.email, s.password)).accessToken;
    projectId = (await api(owner).post('/api/projects', { key: 'INS', name: 'Insights' }).expect(201)).body
      .id;
    otherProjectId = (await api(owner).post('/api/projects', { key: 'INS_OTHER', name: 'Other' }).expect(201))
      .body.id;
  });
  afterAll(() => deployment.stop());

  it("lists each project with its latest finished run's status and pass rate, null before the first", async () => {
    const before = await api(owner).get('/api/projects').expect(200);
    expect(before.body.content.find((p: { id: number }) => p.id === projectId).latestRun).toBeNull();
    await run('latest #1', [{ name: 'a', status: 'FAILED' }]);
    const latest = await run('latest #2', [
      { name: 'a', status: 'PASSED' },
      { name: 'b', status: 'PASSED' },
      { name: 'c', status: 'FAILED' },
      { name: 'd', status: 'SKIPPED' },
    ]);
    // A run in progress is not the latest yet (API.md, "Streams": the latest finished run of the default stream).
    await run('latest #3', [{ name: 'a', status: 'PASSED' }], { finish: false });
    const after = await api(owner).get('/api/projects').expect(200);
    const project = after.body.content.find((p: { id: number }) => p.id === projectId);
    expect(project.latestRun).toEqual({
      id: latest,
      name: 'latest #2',
      status: 'FINISHED',
      stream: 'latest',
      startedAt: expect.any(String),
      finishedAt: expect.any(String),
      counts: { total: 4, passed: 2, failed: 1, broken: 0, skipped: 1, passedOnRetry: 0, attempts: 4 },
      passRate: 2 / 3,
    });
    expect((await api(owner).get(`/api/projects/${projectId}`).expect(200)).body.latestRun.id).toBe(latest);
    expect(after.body.content.find((p: { id: number }) => p.id === otherProjectId).latestRun).toBeNull();
  });

  it('filters runs by status and by a part of the name, and refuses an unknown status', async () => {
    await run('nightly #1', [{ name: 'x', status: 'PASSED' }]);
    await run('nightly #2', [{ name: 'x', status: 'PASSED' }], { finish: false });
    await run('100%_real', [{ name: 'x', status: 'PASSED' }]);
    const names = async (query: string) =>
      (await api(owner).get(`/api/projects/${projectId}/runs?${query}`).expect(200)).body.content.map(
        (r: { name: string }) => r.name,
      );
    expect(await names('q=NIGHTLY')).toEqual(['nightly #2', 'nightly #1']);
    expect(await names('q=nightly&status=FINISHED')).toEqual(['nightly #1']);
    expect(await names('status=IN_PROGRESS')).toEqual(['nightly #2', 'latest #3']);
    // LIKE's wildcards are taken literally.
    expect(await names('q=%25_')).toEqual(['100%_real']);
    const bad = await api(owner).get(`/api/projects/${projectId}/runs?status=DONE`).expect(400);
    expect(bad.body).toEqual({
      status: 400,
      error: 'Bad Request',
      message: expect.stringContaining('status must be one of'),
    });
  });

  it("filters a run's results by statuses, suite and name, sorts them, and lists its suites", async () => {
    const id = await run('filters', [
      { name: 'login ok', suite: 'Auth', status: 'PASSED', durationMs: 30 },
      { name: 'login locked', suite: 'Auth', status: 'FAILED', durationMs: 10 },
      { name: 'cart total', suite: 'Cart', status: 'BROKEN', durationMs: 20 },
      { name: 'cart empty', suite: 'Cart', status: 'SKIPPED' },
      { name: 'no suite', status: 'PASSED', durationMs: 5 },
    ]);
    const names = async (query: string) =>
      (await api(owner).get(`/api/runs/${id}/results?${query}`).expect(200)).body.content.map(
        (r: { name: string }) => r.name,
      );
    expect(await names('status=FAILED,BROKEN')).toEqual(['login locked', 'cart total']);
    expect(await names('status=FAILED&status=BROKEN&sort=name,asc')).toEqual(['cart total', 'login locked']);
    expect(await names('suite=Cart')).toEqual(['cart total', 'cart empty']);
    expect(await names('suite=')).toEqual(['no suite']);
    expect(await names('q=LOGIN&sort=durationMs,desc')).toEqual(['login ok', 'login locked']);
    await api(owner).get(`/api/runs/${id}/results?status=FAILED,DONE`).expect(400);
    const suites = await api(owner).get(`/api/runs/${id}/suites`).expect(200);
    expect(suites.body).toEqual({
      content: [
        { suite: '', total: 1, failed: 0 },
        { suite: 'Auth', total: 2, failed: 1 },
        { suite: 'Cart', total: 2, failed: 1 },
      ],
      page: 0,
      size: 20,
      totalElements: 3,
      totalPages: 1,
    });
    expect(
      (await api(owner).get(`/api/runs/${id}/suites?sort=failed,desc&size=1&page=5`).expect(200)).body,
    ).toEqual(expect.objectContaining({ content: [], totalElements: 3 }));
  });

  it("pages a run's results in id order across statuses, either way, with the run's own count", async () => {
    const statuses = ['PASSED', 'FAILED', 'SKIPPED', 'BROKEN', 'PASSED', 'PASSED', 'FAILED'];
    const items = Array.from({ length: 35 }, (_, i) => ({
      name: `r${i}`,
      status: statuses[i % statuses.length],
    }));
    const id = await run('id order', items, { finish: false });
    const all: string[] = [];
    for (let page = 0; page < 4; page++) {
      const res = await api(owner).get(`/api/runs/${id}/results?size=10&page=${page}`).expect(200);
      expect(res.body).toEqual(expect.objectContaining({ totalElements: 35, totalPages: 4, page, size: 10 }));
      all.push(...res.body.content.map((r: { name: string }) => r.name));
    }
    expect(all).toEqual(items.map((r) => r.name));
    const desc = await api(owner).get(`/api/runs/${id}/results?size=5&page=1&sort=id,desc`).expect(200);
    expect(desc.body.content.map((r: { name: string }) => r.name)).toEqual([
      'r29',
      'r28',
      'r27',
      'r26',
      'r25',
    ]);
    const failures = await api(owner)
      .get(`/api/runs/${id}/results?status=FAILED,BROKEN&size=3&page=1`)
      .expect(200);
    expect(failures.body.totalElements).toBe(15);
    expect(failures.body.content.map((r: { name: string }) => r.name)).toEqual(['r8', 'r10', 'r13']);
    const past = await api(owner).get(`/api/runs/${id}/results?size=10&page=9`).expect(200);
    expect(past.body).toEqual(expect.objectContaining({ content: [], totalElements: 35 }));
  });

  it('groups failures by their message with numbers, ids and temporary paths stripped, and lists a group', async () => {
    const items: Item[] = [];
    for (let i = 0; i < 300; i++) {
      items.push({
        name: `order ${i}`,
        suite: 'Orders',
        status: 'BROKEN',
        message: `Connection refused: db-${i % 3}:5432 after ${1000 + i} ms`,
      });
    }
    for (let i = 0; i < 4; i++) {
      items.push({
        name: `upload ${i}`,
        suite: 'Files',
        status: 'FAILED',
        message: `ENOENT: no such file /tmp/jest-${i}abc/out${i}.txt`,
      });
      items.push({
        name: `user ${i}`,
        suite: 'Users',
        status: 'FAILED',
        message: `User 5f0c2b1e-1d2a-4c4e-9a2b-${String(i).padStart(12, '0')} not found (object 0x7ffd${i}0)`,
      });
    }
    items.push({ name: 'plain', suite: 'Users', status: 'FAILED' });
    items.push({
      name: 'fine',
      suite: 'Users',
      status: 'PASSED',
      message: 'Connection refused: db-0:5432 after 1 ms',
    });
    const id = await run('groups', items);

    const groups = await api(owner).get(`/api/runs/${id}/failure-groups`).expect(200);
    expect(groups.body.totalElements).toBe(4);
    // Each group is a failure signature of the project, first seen in this run.
    const signature = { signatureId: expect.any(Number), isNew: true, triage: 'TO_INVESTIGATE', issue: null };
    expect(groups.body.content).toEqual([
      {
        key: 'Connection refused: db-<n>:<n> after <n> ms',
        count: 300,
        failed: 0,
        broken: 300,
        tests: 300,
        example: expect.stringMatching(/^Connection refused: db-\d:5432 after \d+ ms$/),
        ...signature,
      },
      {
        key: 'ENOENT: no such file <tmp>',
        count: 4,
        failed: 4,
        broken: 0,
        tests: 4,
        example: expect.stringContaining('/tmp/jest-'),
        ...signature,
      },
      {
        key: 'User <id> not found (object <id>)',
        count: 4,
        failed: 4,
        broken: 0,
        tests: 4,
        example: expect.stringContaining('User 5f0c2b1e'),
        ...signature,
      },
      // Failures without a message met the project before: the signature is not new.
      {
        key: '(no message)',
        count: 1,
        failed: 1,
        broken: 0,
        tests: 1,
        example: null,
        ...signature,
        isNew: false,
      },
    ]);
    const byKey = await api(owner).get(`/api/runs/${id}/failure-groups?sort=key,asc&size=2`).expect(200);
    expect(byKey.body.content.map((g: { key: string }) => g.key)).toEqual([
      '(no message)',
      'Connection refused: db-<n>:<n> after <n> ms',
    ]);
    expect(byKey.body.totalPages).toBe(2);

    const inGroup = await api(owner)
      .get(`/api/runs/${id}/results?group=${encodeURIComponent(groups.body.content[0].key)}&size=500`)
      .expect(200);
    // The passed result with a like message is not a failure.
    expect(inGroup.body.totalElements).toBe(300);
    expect(inGroup.body.content.every((r: { suite: string }) => r.suite === 'Orders')).toBe(true);

    await api(stranger).get(`/api/runs/${id}/failure-groups`).expect(404);
    await api(owner).get('/api/runs/999999999/failure-groups').expect(404);
    await api(owner).get(`/api/runs/${id}/failure-groups?sort=message,asc`).expect(400);
  });

  it('compares a run with the previous one: new failures, fixed, still failing, flaky, added, removed', async () => {
    // One stream ("compare"): the run before the head is the base.
    const base = await run('compare #1', [
      { name: 'A', suite: 'S', status: 'PASSED' },
      { name: 'B', suite: 'S', status: 'FAILED', message: 'old' },
      { name: 'C', suite: 'S', status: 'FAILED' },
      { name: 'D', suite: 'S', status: 'PASSED' },
      { name: 'E', suite: 'S', status: 'PASSED', message: 'gone' },
      { name: 'F', suite: 'S', status: 'PASSED' },
    ]);
    const head = await run('compare #2', [
      { name: 'A', suite: 'S', status: 'FAILED', message: 'expected 1 but got 2' },
      { name: 'B', suite: 'S', status: 'PASSED' },
      { name: 'C', suite: 'S', status: 'BROKEN' },
      { name: 'D', suite: 'S', status: 'PASSED' },
      { name: 'F', suite: 'S', status: 'FAILED', retry: 0 },
      { name: 'F', suite: 'S', status: 'PASSED', retry: 1 },
      { name: 'G', suite: 'S', status: 'FAILED' },
    ]);
    const compared = await api(owner).get(`/api/runs/${head}/compare`).expect(200);
    expect(compared.body).toEqual({
      head: expect.objectContaining({ id: head }),
      base: expect.objectContaining({ id: base }),
      sameRevision: false,
      summary: { newFailures: 1, fixed: 1, stillFailing: 1, flaky: 1, added: 1, removed: 1, unchanged: 1 },
    });
    const tests = await api(owner).get(`/api/runs/${head}/compare/tests`).expect(200);
    expect(tests.body.totalElements).toBe(6);
    const change = Object.fromEntries(
      tests.body.content.map((t: { name: string; change: string }) => [t.name, t.change]),
    );
    expect(change).toEqual({
      A: 'NEW_FAILURE',
      B: 'FIXED',
      C: 'STILL_FAILING',
      E: 'REMOVED',
      F: 'FLAKY',
      G: 'ADDED',
    });
    const newFailures = await api(owner)
      .get(`/api/runs/${head}/compare/tests?base=${base}&change=NEW_FAILURE`)
      .expect(200);
    expect(newFailures.body.content).toEqual([
      {
        testId: expect.any(Number),
        suite: 'S',
        name: 'A',
        change: 'NEW_FAILURE',
        baseStatus: 'PASSED',
        headStatus: 'FAILED',
        message: 'expected 1 but got 2',
      },
    ]);
    const removed = await api(owner)
      .get(`/api/runs/${head}/compare/tests?change=REMOVED,UNCHANGED&sort=name,desc`)
      .expect(200);
    expect(
      removed.body.content.map((t: { name: string; message: string | null }) => [t.name, t.message]),
    ).toEqual([
      ['E', 'gone'],
      ['D', null],
    ]);

    // Reversed: what failed in the head is fixed, what was added is removed.
    const reversed = await api(owner).get(`/api/runs/${base}/compare?base=${head}`).expect(200);
    expect(reversed.body.summary).toEqual({
      newFailures: 1,
      fixed: 1,
      stillFailing: 1,
      flaky: 1,
      added: 1,
      removed: 1,
      unchanged: 1,
    });

    await api(owner).get(`/api/runs/${head}/compare?base=${head}`).expect(400);
    await api(owner).get(`/api/runs/${head}/compare?base=abc`).expect(400);
    await api(owner).get(`/api/runs/${head}/compare/tests?change=BETTER`).expect(400);
    await api(stranger).get(`/api/runs/${head}/compare`).expect(404);
    const foreign = await run('elsewhere', [{ name: 'A', suite: 'S', status: 'PASSED' }], {
      project: otherProjectId,
    });
    const notFound = await api(owner).get(`/api/runs/${head}/compare?base=${foreign}`).expect(404);
    expect(notFound.body.message).toBe(`Run ${foreign} not found in the project of run ${head}`);
  });

  it("counts a flip between two runs of one commit as flaky, and compares a project's first run with nothing", async () => {
    const fresh = (await api(owner).post('/api/projects', { key: 'INS_FRESH', name: 'Fresh' }).expect(201))
      .body.id;
    const first = await run('fresh #1', [{ name: 'only', status: 'PASSED' }], {
      project: fresh,
      attributes: { commit: 'c1' },
    });
    const alone = await api(owner).get(`/api/runs/${first}/compare`).expect(200);
    expect(alone.body.base).toBeNull();
    expect(alone.body.summary).toEqual({
      newFailures: 0,
      fixed: 0,
      stillFailing: 0,
      flaky: 0,
      added: 1,
      removed: 0,
      unchanged: 0,
    });
    const again = await run('fresh #2', [{ name: 'only', status: 'FAILED' }], {
      project: fresh,
      attributes: { commit: 'c1' },
    });
    const compared = await api(owner).get(`/api/runs/${again}/compare`).expect(200);
    expect(compared.body.base.id).toBe(first);
    expect(compared.body.sameRevision).toBe(true);
    expect(compared.body.summary).toEqual({
      newFailures: 0,
      fixed: 0,
      stillFailing: 0,
      flaky: 1,
      added: 0,
      removed: 0,
      unchanged: 0,
    });
  });

  it("gives the project's pass-rate trend over its latest runs, oldest first", async () => {
    await run(
      'trend 1',
      [
        { name: 'a', status: 'PASSED' },
        { name: 'b', status: 'SKIPPED' },
      ],
      { project: otherProjectId },
    );
    await run('trend 2', [{ name: 'a', status: 'FAILED' }], { project: otherProjectId, finish: false });
    const trend = await api(owner).get(`/api/projects/${otherProjectId}/trend?runs=2`).expect(200);
    expect(trend.body.points).toEqual([
      expect.objectContaining({
        name: 'trend 1',
        status: 'FINISHED',
        passRate: 1,
        counts: expect.objectContaining({ total: 2, passed: 1, skipped: 1 }),
        durationMs: expect.any(Number),
      }),
      expect.objectContaining({ name: 'trend 2', status: 'IN_PROGRESS', passRate: 0, durationMs: null }),
    ]);
    const all = await api(owner).get(`/api/projects/${projectId}/trend`).expect(200);
    expect(all.body.points.length).toBeGreaterThan(5);
    expect(all.body.points.at(-1).name).toBe('compare #2');
    await api(owner).get(`/api/projects/${projectId}/trend?runs=500`).expect(400);
    await api(stranger).get(`/api/projects/${projectId}/trend`).expect(404);
  });

  it('reads one test case with its last status and flakiness', async () => {
    const tests = await api(owner).get(`/api/projects/${projectId}/tests?q=F`).expect(200);
    const f = tests.body.content.find((t: { name: string }) => t.name === 'F');
    const one = await api(owner).get(`/api/projects/${projectId}/tests/${f.id}`).expect(200);
    expect(one.body).toEqual({
      id: f.id,
      suite: 'S',
      name: 'F',
      lastStatus: 'PASSED',
      flaky: true,
      flakeRate: expect.any(Number),
      runs: 2,
      firstSeenAt: expect.any(String),
      lastFailedAt: expect.any(String),
      quarantine: null,
      state: 'FLAKY',
    });
    await api(owner).get(`/api/projects/${otherProjectId}/tests/${f.id}`).expect(404);
    await api(owner).get(`/api/projects/${projectId}/tests/nope`).expect(404);
  });

  /**
   * Every read above as the service sends it, EXPLAINed over a project of 90,000 results in 60 other runs: none
   * reads the project's results whole. Each access to `results` is by an index, bounded by one run or one test.
   */
  it("reads by index: no read scans a project's results", async () => {
    const ds = svc.dataSource;
    await ds.query(
      `INSERT INTO test_cases (project_id, identity, suite, name)
         SELECT $1, md5('bulk' || g)::uuid, 'Bulk ' || (g % 20), 'bulk test ' || g FROM generate_series(1, 1500) g`,
      [projectId],
    );
    await ds.query(
      `INSERT INTO runs (project_id, name, status, started_at, count_total)
         SELECT $1, 'bulk ' || r, 'FINISHED', now() - interval '30 days' + r * interval '1 hour', 1500 FROM generate_series(1, 60) r`,
      [projectId],
    );
    await ds.query(
      `INSERT INTO results (run_id, project_id, test_id, name, suite, status, message, duration_ms)
         SELECT ru.id, $1, t.id, t.name, t.suite, CASE WHEN t.id % 7 = 0 THEN 'FAILED' ELSE 'PASSED' END,
                CASE WHEN t.id % 7 = 0 THEN 'expected ' || t.id || ' to be ok' END, t.id % 100
           FROM runs ru JOIN test_cases t ON t.project_id = ru.project_id
          WHERE ru.project_id = $1 AND ru.name LIKE 'bulk %' AND t.name LIKE 'bulk test %'`,
      [projectId],
    );
    await ds.query('ANALYZE results; ANALYZE runs; ANALYZE test_cases');
    const [{ id: bulkRun }] = await ds.query(
      `SELECT id FROM runs WHERE project_id = $1 AND name = 'bulk 60'`,
      [projectId],
    );
    const [{ id: bulkBase }] = await ds.query(
      `SELECT id FROM runs WHERE project_id = $1 AND name = 'bulk 59'`,
      [projectId],
    );
    const [{ id: bulkTest }] = await ds.query(
      `SELECT id FROM test_cases WHERE project_id = $1 AND name = 'bulk test 7'`,
      [projectId],
    );
    const [{ id: bulkResult }] = await ds.query(
      `SELECT id FROM results WHERE run_id = $1 AND name = 'bulk test 7'`,
      [bulkRun],
    );

    const reads = [
      '/api/projects',
      `/api/projects/${projectId}`,
      `/api/projects/${projectId}/runs?q=bulk&status=FINISHED`,
      `/api/projects/${projectId}/trend`,
      `/api/runs/${bulkRun}/results`,
      `/api/runs/${bulkRun}/results?status=FAILED,BROKEN&sort=durationMs,desc`,
      `/api/runs/${bulkRun}/results?suite=Bulk%203&q=test`,
      `/api/runs/${bulkRun}/results?group=${encodeURIComponent('expected <n> to be ok')}`,
      `/api/runs/${bulkRun}/failure-groups`,
      `/api/runs/${bulkRun}/results/${bulkResult}`,
      `/api/runs/${bulkRun}/suites`,
      `/api/runs/${bulkRun}/compare`,
      `/api/runs/${bulkRun}/compare/tests?base=${bulkBase}&change=UNCHANGED`,
      `/api/projects/${projectId}/tests/${bulkTest}`,
      `/api/projects/${projectId}/tests/${bulkTest}/history`,
    ];
    const runner = ds.createQueryRunner();
    const proto = Object.getPrototypeOf(runner) as QueryRunner;
    await runner.release();
    const original = proto.query;
    const seen: { sql: string; params: unknown[] }[] = [];
    proto.query = function (this: QueryRunner, sql: string, params?: unknown[], ...rest: unknown[]) {
      if (/^\s*(SELECT|WITH)\b/i.test(sql) && /\bresults\b/.test(sql)) {
        seen.push({ sql, params: params ?? [] });
      }
      return (original as (...a: unknown[]) => Promise<unknown>).call(this, sql, params, ...rest);
    } as QueryRunner['query'];
    const plans: { path: string; sql: string; plan: string }[] = [];
    try {
      for (const path of reads) {
        seen.length = 0;
        await api(owner).get(path).expect(200);
        for (const { sql, params } of seen.splice(0)) {
          const [{ 'QUERY PLAN': plan }] = await ds.query(`EXPLAIN (FORMAT JSON) ${sql}`, params);
          plans.push({ path, sql, plan: JSON.stringify(plan) });
        }
      }
    } finally {
      proto.query = original;
    }
    expect(plans.length).toBeGreaterThanOrEqual(10);
    for (const { path, sql, plan } of plans) {
      const nodes = flatten(JSON.parse(plan)[0].Plan).filter((n) => n['Relation Name'] === 'results');
      for (const node of nodes) {
        const where = `${path}: ${String(node['Node Type'])} on results (${sql.replace(/\s+/g, ' ').slice(0, 120)}…)`;
        expect([where, node['Node Type']]).not.toEqual([where, 'Seq Scan']);
        // A bitmap heap scan's bound is its index scan child's (checked as a node of its own).
        if (node['Node Type'] !== 'Bitmap Heap Scan') {
          expect([where, String(node['Index Cond'])]).toEqual([
            where,
            expect.stringMatching(/\b(run_id|test_id)\b/),
          ]);
        }
      }
      for (const node of flatten(JSON.parse(plan)[0].Plan).filter((n) =>
        String(n['Index Name']).startsWith('ix_results_'),
      )) {
        expect([path, String(node['Index Cond'])]).toEqual([
          path,
          expect.stringMatching(/\b(run_id|test_id)\b/),
        ]);
      }
    }
  });
});

type PlanNode = Record<string, unknown> & { Plans?: PlanNode[] };

function flatten(node: PlanNode): PlanNode[] {
  return [node, ...(node.Plans ?? []).flatMap(flatten)];
}
