import http from 'node:http';
import pg from 'pg';
import request from 'supertest';
import { RunningApp, TestDeployment } from '../support/app.js';
import { eventually, login, createProject } from '../support/http.js';

type PlanNode = Record<string, unknown> & { Plans?: PlanNode[] };

function flatten(node: PlanNode): PlanNode[] {
  return [node, ...(node.Plans ?? []).flatMap(flatten)];
}

/** A connection of the test's own, outside the service's pool: it holds the locks that make a read wait. */
async function connect(svc: RunningApp): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: svc.config.db.url, application_name: 'read-bounds-test' });
  await client.connect();
  return client;
}

/** The service's statements waiting on a lock (those a test's lock holds up). */
async function waiting(svc: RunningApp, like: string): Promise<{ pid: number; query: string }[]> {
  return svc.dataSource.query(
    `SELECT pid, query FROM pg_stat_activity
      WHERE datname = current_database() AND application_name = 'tms' AND pid <> pg_backend_pid()
        AND state = 'active' AND wait_event_type = 'Lock' AND query ILIKE $1`,
    [like],
  );
}

const bad = (message: RegExp) => ({
  status: 400,
  error: 'Bad Request',
  message: expect.stringMatching(message),
});

describe('Reads are bounded: list parameters once each and capped, text capped, statements timed out and cancelled', () => {
  const deployment = new TestDeployment();
  let svc: RunningApp;
  let token: string;
  let projectId: number;
  let runId: number;
  let baseRunId: number;

  const get = (path: string) => request(svc.url).get(path).set('Authorization', `Bearer ${token}`);

  beforeAll(async () => {
    [svc] = await deployment.start();
    token = (await login(svc.url)).accessToken;
    const post = (path: string, body: object) =>
      request(svc.url).post(path).set('Authorization', `Bearer ${token}`).send(body);
    projectId = (await post('/api/projects', { key: 'BOUNDS', name: 'Bounds' }).expect(201)).body.id;
    const run = async (name: string, statuses: string[]) => {
      const id = (await post(`/api/projects/${projectId}/runs`, { name }).expect(201)).body.id as number;
      await post(`/api/runs/${id}/results`, {
        results: statuses.map((status, i) => ({
          name: `t${i}`,
          suite: 'S',
          status,
          message: status === 'PASSED' ? undefined : `boom ${i}`,
        })),
      }).expect(201);
      await post(`/api/runs/${id}/finish`, {}).expect(200);
      return id;
    };
    baseRunId = await run('base', ['PASSED', 'PASSED', 'PASSED', 'FAILED', 'PASSED']);
    runId = await run('head', ['FAILED', 'PASSED', 'FAILED', 'BROKEN', 'PASSED']);
  });
  afterAll(() => deployment.stop());

  describe('list-valued parameters', () => {
    it.each([
      ['status=FAILED,FAILED', ['t0', 't2']],
      ['status=FAILED&status=FAILED', ['t0', 't2']],
      ['status=FAILED,BROKEN,FAILED,BROKEN', ['t0', 't2', 't3']],
      ['status=FAILED,FAILED&sort=name,desc', ['t2', 't0']],
      ['status=FAILED,FAILED&q=t', ['t0', 't2']],
    ])('GET /api/runs/{id}/results?%s lists each result once, with the right total', async (query, names) => {
      const page = (await get(`/api/runs/${runId}/results?${query}`).expect(200)).body;
      expect(page.content.map((r: { name: string }) => r.name)).toEqual(names);
      expect(page.totalElements).toBe(names.length);
    });

    it('GET /api/runs/{id}/results refuses more than 20 status values, repeats included, naming status', async () => {
      const many = Array.from({ length: 21 }, () => 'PASSED');
      for (const query of [
        `status=${many.join(',')}`,
        many.map((s) => `status=${s}`).join('&'),
        `status=${Array(2000).fill('PASSED').join(',')}`,
      ]) {
        const res = await get(`/api/runs/${runId}/results?${query}`).expect(400);
        expect(res.body).toEqual(bad(/^status takes at most 20 values/));
      }
      // Twenty is allowed: the cap is on the request, the work is on the distinct values.
      const twenty = await get(
        `/api/runs/${runId}/results?status=${Array(20).fill('PASSED').join(',')}`,
      ).expect(200);
      expect(twenty.body.totalElements).toBe(2);
    });

    it('GET /api/runs/{id}/compare/tests: change once each, and at most 20 values', async () => {
      const once = (
        await get(`/api/runs/${runId}/compare/tests?base=${baseRunId}&change=NEW_FAILURE`).expect(200)
      ).body;
      const twice = (
        await get(
          `/api/runs/${runId}/compare/tests?base=${baseRunId}&change=NEW_FAILURE,NEW_FAILURE&change=NEW_FAILURE`,
        ).expect(200)
      ).body;
      expect(once.totalElements).toBeGreaterThan(0);
      expect(twice).toEqual(once);
      const res = await get(
        `/api/runs/${runId}/compare/tests?change=${Array(21).fill('FIXED').join(',')}`,
      ).expect(400);
      expect(res.body).toEqual(bad(/^change takes at most 20 values/));
    });

    it('sort: a field given again changes nothing; more than 20 sort values is a 400 on every list', async () => {
      const names = async (query: string) =>
        (await get(`/api/runs/${runId}/results?${query}`).expect(200)).body.content.map(
          (r: { name: string }) => r.name,
        );
      expect(await names('sort=name,desc&sort=name,asc&sort=name')).toEqual(['t4', 't3', 't2', 't1', 't0']);
      expect(await names('sort=status,asc&sort=name,desc&sort=status,desc')).toEqual([
        't3',
        't2',
        't0',
        't4',
        't1',
      ]);

      const [{ id: testId }] = (await get(`/api/projects/${projectId}/tests`).expect(200)).body.content;
      const lists = [
        '/api/projects',
        `/api/projects/${projectId}/members`,
        `/api/projects/${projectId}/runs`,
        `/api/projects/${projectId}/tests`,
        `/api/projects/${projectId}/tests/${testId}/history`,
        `/api/runs/${runId}/results`,
        `/api/runs/${runId}/failure-groups`,
        `/api/runs/${runId}/suites`,
        `/api/runs/${runId}/compare/tests`,
        '/api/admin/users',
        '/api/admin/groups',
        '/api/admin/audit',
        '/api/users/me/api-keys',
      ];
      const sorts = Array(21).fill('sort=id,asc').join('&');
      for (const path of lists) {
        const res = await get(`${path}?${sorts}`);
        expect([path, res.status, res.body]).toEqual([path, 400, bad(/^sort takes at most 20 values/)]);
      }
    });
  });

  describe('free-text parameters', () => {
    it.each([
      ['/api/projects/{p}/runs', 'q', 200],
      ['/api/runs/{r}/results', 'q', 200],
      ['/api/runs/{r}/results', 'suite', 1000],
      ['/api/runs/{r}/results', 'group', 600],
      ['/api/projects/{p}/failures', 'q', 200],
      ['/api/projects/{p}/tests', 'q', 200],
      ['/api/admin/users', 'q', 200],
    ])('GET %s?%s= takes at most %i characters, else 400 naming it', async (template, name, max) => {
      const path = template.replace('{p}', String(projectId)).replace('{r}', String(runId));
      await get(`${path}?${name}=${'x'.repeat(max)}`).expect(200);
      const res = await get(`${path}?${name}=${'x'.repeat(max + 1)}`).expect(400);
      expect(res.body).toEqual(
        bad(new RegExp(`^${name} must be (shorter than or equal to|at most) ${max} characters`)),
      );
      // One value each: a repeated text parameter is not a list.
      await get(`${path}?${name}=a&${name}=b`).expect(400);
    });

    it('takes LIKE wildcards in q literally', async () => {
      for (const path of [
        `/api/runs/${runId}/results`,
        `/api/projects/${projectId}/tests`,
        `/api/projects/${projectId}/runs`,
        `/api/projects/${projectId}/failures`,
      ]) {
        for (const q of ['%', '_', '\\', 't_']) {
          const res = await get(`${path}?q=${encodeURIComponent(q)}`).expect(200);
          expect([path, q, res.body.totalElements]).toEqual([path, q, 0]);
        }
      }
    });
  });

  it('cancels the statement of a read whose client went away', async () => {
    const locker = await connect(svc);
    try {
      // The read waits on this lock; without its cancellation it would wait as long as the lock is held.
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE results IN ACCESS EXCLUSIVE MODE');
      const { hostname, port } = new URL(svc.url);
      const req = http.get({
        hostname,
        port,
        path: `/api/runs/${runId}/results?status=FAILED`,
        headers: { Authorization: `Bearer ${token}` },
      });
      req.on('error', () => undefined);
      const [stuck] = await eventually(async () => {
        const rows = await waiting(svc, '%FROM results%');
        return rows.length ? rows : undefined;
      });
      req.destroy();
      await eventually(async () => {
        const rows = await waiting(svc, '%FROM results%');
        return rows.some((r) => r.pid === stuck.pid) ? undefined : true;
      }, 10_000);
    } finally {
      await locker.query('ROLLBACK');
      await locker.end();
    }
    // The connection went back to the pool in working order.
    await get(`/api/runs/${runId}/results?status=FAILED`).expect(200);
  });

  describe('GET /api/projects/{id}/tests: pages by cursor, and a deep page costs its own rows', () => {
    let bigProject: number;

    beforeAll(async () => {
      bigProject = await createProject(svc.url, token, { key: 'MANY', name: 'Many' });
      await svc.dataSource.query(
        `INSERT INTO test_cases (project_id, identity, suite, name)
           SELECT $1, md5('many' || g)::uuid, 'Suite ' || (g % 7), 'test ' || lpad((g % 500)::text, 3, '0') FROM generate_series(1, 5000) g`,
        [bigProject],
      );
      await svc.dataSource.query('VACUUM ANALYZE test_cases');
    });

    const walk = async (query: string) => {
      const ids: number[] = [];
      const pages: { page: number; totalElements: number; nextCursor: string | null }[] = [];
      let cursor: string | null = null;
      do {
        const body: {
          content: { id: number }[];
          page: number;
          totalElements: number;
          nextCursor: string | null;
        } = (
          await get(
            `/api/projects/${bigProject}/tests?size=500&${query}${cursor ? `&cursor=${cursor}` : ''}`,
          ).expect(200)
        ).body;
        ids.push(...body.content.map((t) => t.id));
        pages.push(body);
        cursor = body.nextCursor;
      } while (cursor);
      return { ids, pages };
    };

    it.each(['', 'sort=name,desc', 'sort=suite,asc&sort=name,desc', 'sort=id,desc', 'q=test%2000'])(
      'walking by nextCursor (%s) gives the same tests in the same order as page numbers do',
      async (query) => {
        const { ids, pages } = await walk(query);
        const byPage: number[] = [];
        for (let page = 0; page < pages.length; page++) {
          const body = (
            await get(`/api/projects/${bigProject}/tests?size=500&page=${page}&${query}`).expect(200)
          ).body;
          byPage.push(...body.content.map((t: { id: number }) => t.id));
        }
        expect(ids).toEqual(byPage);
        expect(new Set(ids).size).toBe(ids.length);
        expect(pages.map((p) => p.page)).toEqual(pages.map((_, i) => i));
        expect(pages.every((p) => p.totalElements === ids.length)).toBe(true);
        expect(pages.at(-1)!.nextCursor).toBeNull();
      },
    );

    it('keeps the documented page shape, adding only nextCursor', async () => {
      const body = (await get(`/api/projects/${bigProject}/tests?size=2&page=3`).expect(200)).body;
      expect(body).toEqual({
        content: [expect.anything(), expect.anything()],
        page: 3,
        size: 2,
        totalElements: 5000,
        totalPages: 2500,
        nextCursor: expect.any(String),
      });
    });

    it('refuses a cursor it did not give for this list, and a cursor with a page number', async () => {
      const { nextCursor } = (await get(`/api/projects/${bigProject}/tests?size=5`).expect(200)).body;
      const refused = async (query: string, message: RegExp) =>
        expect((await get(`/api/projects/${bigProject}/tests?${query}`).expect(400)).body).toEqual(
          bad(message),
        );
      await refused(`cursor=${nextCursor}&page=1`, /^page and cursor cannot be given together/);
      await refused(`cursor=${nextCursor}&sort=name,desc`, /^cursor belongs to another sort or q/);
      await refused(`cursor=${nextCursor}&q=test`, /^cursor belongs to another sort or q/);
      await refused('cursor=nonsense', /^cursor is not one this list gave out/);
      const forged = Buffer.from(
        JSON.stringify({
          p: String(bigProject),
          s: 'suite,ASC;name,ASC;id,ASC',
          q: '',
          k: ['a', 'b', '1; DROP'],
          o: 0,
          n: 0,
        }),
      ).toString('base64url');
      await refused(`cursor=${forged}`, /^cursor is not one this list gave out/);
      // Another project's list: not continued here (with the other project's total).
      const other = (await get(`/api/projects/${projectId}/tests?size=1`).expect(200)).body
        .nextCursor as string;
      await refused(`cursor=${other}`, /^cursor belongs to another project's tests/);
    });

    /**
     * The deep page EXPLAINed as the service sends it: the page's rows are chosen by an index-only scan of the
     * test cases, without a Seq Scan, and only they are joined to their health (read once per row of the page, not
     * per row skipped); the results are not read at all (test health is kept in columns).
     */
    it('chooses a deep page from the index before joining its health', async () => {
      const runner = svc.dataSource.createQueryRunner();
      const proto = Object.getPrototypeOf(runner) as {
        query: (this: unknown, sql: unknown, params?: unknown[], ...rest: unknown[]) => Promise<unknown>;
      };
      await runner.release();
      const original = proto.query;
      const seen: { sql: string; params: unknown[] }[] = [];
      proto.query = function (this: unknown, sql: unknown, params?: unknown[], ...rest: unknown[]) {
        if (typeof sql === 'string' && /\btest_cases\b/.test(sql) && /\bLEFT JOIN test_health\b/.test(sql)) {
          seen.push({ sql, params: params ?? [] });
        }
        return original.call(this, sql, params, ...rest);
      };
      try {
        const deep = (await get(`/api/projects/${bigProject}/tests?size=20&page=245`).expect(200)).body;
        await get(`/api/projects/${bigProject}/tests?size=20&cursor=${deep.nextCursor}`).expect(200);
      } finally {
        proto.query = original;
      }
      expect(seen).toHaveLength(2);
      for (const { sql, params } of seen) {
        const [{ 'QUERY PLAN': plan }] = await svc.dataSource.query(
          `EXPLAIN (ANALYZE, FORMAT JSON) ${sql}`,
          params,
        );
        const nodes = flatten(plan[0].Plan as PlanNode);
        const testCases = nodes.filter((n) => n['Relation Name'] === 'test_cases');
        expect(testCases.map((n) => [n['Node Type'], n['Index Name']])).toContainEqual([
          'Index Only Scan',
          'ix_test_cases_project_order',
        ]);
        expect(testCases.filter((n) => n['Node Type'] === 'Seq Scan')).toEqual([]);
        for (const node of testCases.filter((n) => n['Index Name'] !== 'ix_test_cases_project_order')) {
          expect(node['Actual Loops']).toBeLessThanOrEqual(20);
        }
        const perRow = nodes.filter((n) => n['Relation Name'] === 'test_health');
        expect(perRow.length).toBeGreaterThan(0);
        for (const node of perRow) {
          expect(node['Actual Loops']).toBeLessThanOrEqual(20);
        }
        // Results only for the page's own rows: a steady test's runs since its stored last run (runs.repository.ts).
        for (const node of nodes.filter((n) => n['Relation Name'] === 'results')) {
          expect(node['Node Type']).not.toBe('Seq Scan');
          expect(node['Actual Loops']).toBeLessThanOrEqual(20);
        }
      }
    });
  });
});

describe('The statement timeout (SVC_DB_STATEMENT_TIMEOUT)', () => {
  const deployment = new TestDeployment({ SVC_DB_STATEMENT_TIMEOUT: '1s' });
  let svc: RunningApp;
  let token: string;
  let projectId: number;
  let runId: number;

  beforeAll(async () => {
    [svc] = await deployment.start();
    token = (await login(svc.url)).accessToken;
    const post = (path: string, body: object) =>
      request(svc.url).post(path).set('Authorization', `Bearer ${token}`).send(body);
    projectId = (await post('/api/projects', { key: 'SLOW', name: 'Slow' }).expect(201)).body.id;
    runId = (await post(`/api/projects/${projectId}/runs`, { name: 'r' }).expect(201)).body.id;
    await post(`/api/runs/${runId}/results`, { results: [{ name: 'a', status: 'PASSED' }] }).expect(201);
  });
  afterAll(() => deployment.stop());

  /** Runs `work` while `lock` is held, released once a statement of the service has waited on it past the timeout. */
  async function whileLocked<T>(lock: string, like: string, work: () => Promise<T>): Promise<T> {
    const locker = await connect(svc);
    try {
      await locker.query('BEGIN');
      await locker.query(lock);
      const pending = work();
      await eventually(async () => ((await waiting(svc, like)).length ? true : undefined));
      // Past the 1 s timeout (not a timed assertion: the outcome is checked, whenever it comes).
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      await locker.query('COMMIT');
      return await pending;
    } finally {
      await locker.end();
    }
  }

  it('is set on every pooled connection, with JIT off and random reads priced for a cache', async () => {
    const settings = await Promise.all(
      Array.from({ length: 5 }, () =>
        svc.dataSource.query(
          `SELECT current_setting('statement_timeout') AS timeout, current_setting('jit') AS jit,
                  current_setting('random_page_cost') AS "randomPageCost"`,
        ),
      ),
    );
    for (const [row] of settings) {
      expect(row).toEqual({ timeout: '1s', jit: 'off', randomPageCost: '1.1' });
    }
  });

  it('answers a read that runs past it with 503 in the house format', async () => {
    const locker = await connect(svc);
    let res: request.Response;
    try {
      // The read waits on the lock, held until it has answered: without a timeout, it would never answer.
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE results IN ACCESS EXCLUSIVE MODE');
      res = await request(svc.url).get(`/api/runs/${runId}/results`).set('Authorization', `Bearer ${token}`);
    } finally {
      await locker.query('ROLLBACK');
      await locker.end();
    }
    expect(res.status).toBe(503);
    expect(res.body).toEqual({
      status: 503,
      error: 'Service Unavailable',
      message: expect.stringMatching(/took longer than the database allows/),
    });
    expect(JSON.stringify(res.body)).not.toMatch(/SELECT|canceling/i);
  });

  it('leaves an import, which may rightly take longer, to finish', async () => {
    const junit = `<testsuite name="S"><testcase classname="S" name="imported"/></testsuite>`;
    const res = await whileLocked('LOCK TABLE test_cases IN SHARE MODE', '%test_cases%', () =>
      request(svc.url)
        .post('/api/import/junit')
        .query({ projectId: String(projectId) })
        .set('Authorization', `Bearer ${token}`)
        .set('Content-Type', 'application/xml')
        .send(Buffer.from(junit))
        .then((r) => r),
    );
    expect([res.status, res.body.counts?.total]).toEqual([201, 1]);
  });

  it('deletes a run without touching its results: they are purged later, in batches within the limit', async () => {
    // The results table locked against writes: the deletion answers all the same (its results are queued).
    const locker = await connect(svc);
    try {
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE results IN SHARE MODE');
      const res = await request(svc.url).delete(`/api/runs/${runId}`).set('Authorization', `Bearer ${token}`);
      expect(res.status).toBe(204);
    } finally {
      await locker.query('ROLLBACK');
      await locker.end();
    }
  });
});
