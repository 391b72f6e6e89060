import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { insertUser } from '../factories/user.factory.js';
import { RunningApp, TestDeployment } from '../support/app.js';
import { eventually, login } from '../support/http.js';
import { SIMILAR_SQL, listQuery } from '../../src/triage/signatures.repository.js';

type Status = 'PASSED' | 'FAILED' | 'BROKEN';
interface Item {
  name: string;
  status: Status;
  message?: string;
  trace?: string;
}

const CHECKOUT = 'Checkout failed: payment provider answered <n> for order <id>';

/** The same failure as each surface sends it: other numbers, ids, paths and line numbers each time. */
function dbFailure(n: number): Pick<Item, 'message' | 'trace'> {
  return {
    message: `Connection refused: db-${n}:5432 after ${1000 + n} ms (pool 0x7ffd${n}0)`,
    trace: [
      `Error: connect ECONNREFUSED 10.0.0.${n}:5432`,
      `    at TCPConnectWrap.afterConnect [as oncomplete] (node:net:16${n}7:16)`,
      `    at Pool.connect (/builds/job-${n}/shop/node_modules/pg-pool/index.js:4${n}:11)`,
      `    at OrderRepository.save (/builds/job-${n}/shop/src/orders/order.repository.js:${20 + n}:7)`,
    ].join('\n'),
  };
}
const DB_KEY =
  'Connection refused: db-<n>:<n> after <n> ms (pool <id>) @ OrderRepository.save (order.repository.js)';

describe('Failure triage across runs', () => {
  const deployment = new TestDeployment();
  let svc: RunningApp;
  let jwt: string;
  let token: string;
  let userId: string;
  let projectId: number;
  let otherProjectId: number;
  let viewer: { jwt: string; id: string };
  let stranger: { jwt: string; id: string };

  const get = (path: string, as = jwt) => request(svc.url).get(path).set('Authorization', `Bearer ${as}`);
  const post = (path: string, body: object, as = jwt) =>
    request(svc.url).post(path).set('Authorization', `Bearer ${as}`).send(body);
  const patch = (path: string, body: object, as = jwt) =>
    request(svc.url).patch(path).set('Authorization', `Bearer ${as}`).send(body);

  async function v1Run(
    name: string,
    startedAt: string | undefined,
    items: Item[],
    project = projectId,
    stream = 'nightly',
  ) {
    const run = (await post(`/api/projects/${project}/runs`, { name, stream, startedAt }).expect(201)).body;
    await post(`/api/runs/${run.id}/results`, {
      results: items.map((i) => ({ suite: 'Shop', ...i })),
    }).expect(201);
    await post(`/api/runs/${run.id}/finish`, {}).expect(200);
    return run.id as number;
  }

  async function importRun(xml: string, project = projectId): Promise<number> {
    return (
      await request(svc.url)
        .post(`/api/import/junit?projectId=${project}&stream=nightly`)
        .set('Authorization', `Bearer ${jwt}`)
        .set('Content-Type', 'application/xml')
        .send(xml)
        .expect(201)
    ).body.runId;
  }

  async function v2Run(name: string, startedAt: string, items: Item[]): Promise<number> {
    const uuid = randomUUID();
    await post(
      `/api/v2/projects/${projectId}/runs`,
      { uuid, name, stream: 'nightly', startedAt },
      token,
    ).expect(202);
    const results = items.map((i) => ({ uuid: randomUUID(), suite: 'Shop', ...i }));
    await post(`/api/v2/projects/${projectId}/runs/${uuid}/results`, { results }, token).expect(202);
    await post(`/api/v2/projects/${projectId}/runs/${uuid}/finish`, {}, token).expect(202);
    const run = await eventually(async () => {
      const r = await get(`/api/v2/projects/${projectId}/runs/${uuid}`, token);
      return r.status === 200 && r.body.status === 'FINISHED' ? (r.body as { id: number }) : undefined;
    });
    return run.id;
  }

  const failures = async (query = '', project = projectId) =>
    (await get(`/api/projects/${project}/failures${query}`).expect(200)).body as {
      content: { id: number; key: string; triage: string; [k: string]: unknown }[];
      totalElements: number;
    };
  const byKey = async (key: string) => (await failures('?size=500')).content.find((s) => s.key === key)!;
  const groups = async (runId: number) =>
    (await get(`/api/runs/${runId}/failure-groups?size=100`).expect(200)).body.content as {
      key: string;
      signatureId: number;
      isNew: boolean;
      triage: string;
      issue: unknown;
      count: number;
    }[];

  async function member(role: 'VIEWER' | 'REPORTER') {
    const user = await insertUser(svc.dataSource);
    await request(svc.url)
      .put(`/api/projects/${projectId}/members/${user.id}`)
      .set('Authorization', `Bearer ${jwt}`)
      .send({ role })
      .expect(200);
    return { jwt: (await login(svc.url, user.email, user.password)).accessToken, id: String(user.id) };
  }

  beforeAll(async () => {
    [svc] = await deployment.start();
    const user = await insertUser(svc.dataSource);
    userId = String(user.id);
    jwt = (await login(svc.url, user.email, user.password)).accessToken;
    projectId = (await post('/api/projects', { key: 'TRIAGE', name: 'Triage' }).expect(201)).body.id;
    otherProjectId = (await post('/api/projects', { key: 'TRIAGE_OTHER', name: 'Other' }).expect(201)).body
      .id;
    token = (await post('/api/users/me/api-keys', { name: 'ci' }).expect(201)).body.token;
    viewer = await member('VIEWER');
    const outsider = await insertUser(svc.dataSource);
    stranger = {
      jwt: (await login(svc.url, outsider.email, outsider.password)).accessToken,
      id: String(outsider.id),
    };
  });
  afterAll(() => deployment.stop());

  let first: number;
  let second: number;
  let third: number;
  let signatureId: number;

  it("keeps one signature's history across runs of V1, an import and V2", async () => {
    first = await v1Run('nightly 1', '2026-11-20T01:00:00Z', [
      { name: 'saves order', status: 'BROKEN', ...dbFailure(1) },
      { name: 'saves basket', status: 'FAILED', ...dbFailure(2) },
      { name: 'lists', status: 'PASSED' },
    ]);
    second = await v2Run('nightly 2', '2026-11-21T01:00:00Z', [
      { name: 'saves order', status: 'FAILED', ...dbFailure(3) },
      { name: 'lists', status: 'PASSED' },
    ]);
    // The import starts now: the latest run.
    const [f1, f2] = [dbFailure(4), dbFailure(5)];
    third = await importRun(`<testsuite name="Shop">
      <testcase classname="Shop" name="saves order"><error message="${f1.message}">${f1.trace}</error></testcase>
      <testcase classname="Shop" name="refunds"><failure message="${f2.message}">${f2.trace}</failure></testcase>
      <testcase classname="Shop" name="lists"/>
    </testsuite>`);

    const page = await failures();
    expect(page.totalElements).toBe(1);
    const [signature] = page.content;
    signatureId = signature.id;
    expect(signature).toMatchObject({
      key: DB_KEY,
      sampleMessage: dbFailure(1).message,
      firstSeen: { runId: first, at: '2026-11-20T01:00:00.000Z' },
      lastSeen: { runId: third },
      occurrences: 5,
      tests: 3,
      runs: 3,
      triage: 'TO_INVESTIGATE',
      issue: null,
      note: null,
      assignee: null,
      suggested: null,
    });

    const detail = (await get(`/api/failures/${signatureId}`).expect(200)).body;
    expect(detail.recentRuns.map((r: { runId: number; count: number }) => [r.runId, r.count])).toEqual([
      [third, 2],
      [second, 1],
      [first, 2],
    ]);
    expect(detail.topTests).toEqual([
      expect.objectContaining({ suite: 'Shop', name: 'saves order', count: 3 }),
      expect.objectContaining({ name: 'saves basket', count: 1 }),
      expect.objectContaining({ name: 'refunds', count: 1 }),
    ]);

    // The run's groups are the signatures: new in the first run only.
    expect(await groups(first)).toEqual([
      expect.objectContaining({
        key: DB_KEY,
        count: 2,
        signatureId,
        isNew: true,
        triage: 'TO_INVESTIGATE',
        issue: null,
      }),
    ]);
    expect(await groups(third)).toEqual([expect.objectContaining({ signatureId, isNew: false })]);
    const inGroup = await get(`/api/runs/${first}/results?group=${encodeURIComponent(DB_KEY)}`).expect(200);
    expect(inGroup.body.content.map((r: { name: string }) => r.name)).toEqual([
      'saves order',
      'saves basket',
    ]);

    // Each failing result names its signature; the others have no `failure`.
    const results = (await get(`/api/runs/${third}/results?sort=name,asc`).expect(200)).body.content;
    expect(results.map((r: { name: string; failure?: unknown }) => [r.name, r.failure])).toEqual([
      ['lists', undefined],
      ['refunds', { signatureId, isNew: false, triage: 'TO_INVESTIGATE', issue: null }],
      ['saves order', { signatureId, isNew: false, triage: 'TO_INVESTIGATE', issue: null }],
    ]);
    const one = results.find((r: { name: string }) => r.name === 'refunds');
    expect((await get(`/api/runs/${third}/results/${one.id}`).expect(200)).body.failure).toEqual({
      signatureId,
      isNew: false,
      triage: 'TO_INVESTIGATE',
      issue: null,
    });
  });

  it('applies a triage to every occurrence, past and future, audited', async () => {
    const issue = {
      url: 'https://jira.example.com/browse/SHOP-7',
      key: 'SHOP-7',
      title: 'DB pool exhausted',
    };
    const changed = await patch(`/api/failures/${signatureId}`, {
      triage: 'SYSTEM_ISSUE',
      issue,
      note: 'The staging database restarts nightly.',
      assigneeId: userId,
    }).expect(200);
    expect(changed.body).toMatchObject({
      triage: 'SYSTEM_ISSUE',
      issue,
      note: 'The staging database restarts nightly.',
      assignee: { id: Number(userId) },
      occurrences: 5,
    });
    expect(await groups(first)).toEqual([
      expect.objectContaining({ triage: 'SYSTEM_ISSUE', issue, isNew: true }),
    ]);

    const fourth = await v1Run('nightly 4', undefined, [
      { name: 'saves order', status: 'FAILED', ...dbFailure(6) },
    ]);
    expect(await groups(fourth)).toEqual([
      expect.objectContaining({ signatureId, triage: 'SYSTEM_ISSUE', issue, isNew: false }),
    ]);
    expect((await get(`/api/failures/${signatureId}`).expect(200)).body).toMatchObject({
      occurrences: 6,
      runs: 4,
      lastSeen: { runId: fourth },
    });

    const audit: { type: string; details: { failureId: number } }[] = await svc.dataSource.query(
      `SELECT type, details FROM audit_events WHERE type = 'FAILURE_TRIAGED' AND target = $1`,
      [`project:${projectId}`],
    );
    expect(audit).toEqual([
      expect.objectContaining({ details: expect.objectContaining({ failureId: signatureId }) }),
    ]);

    // The filters of the list: by triage, by assignee (me, or an id).
    expect((await failures('?triage=SYSTEM_ISSUE')).totalElements).toBe(1);
    expect((await failures('?triage=TO_INVESTIGATE,PRODUCT_BUG')).totalElements).toBe(0);
    expect((await failures('?assignee=me')).content.map((s) => s.id)).toEqual([signatureId]);
    expect((await failures(`?assignee=${viewer.id}`)).totalElements).toBe(0);
  });

  it('searches messages by words and by a fragment, and lists the new ones of the latest run', async () => {
    const latest = await v1Run('nightly 5', undefined, [
      { name: 'pays', status: 'FAILED', message: 'Payment gateway timeout after 30 s' },
      { name: 'shows dashboard', status: 'FAILED', message: 'Element not found: .dashboard-metrics' },
      { name: 'saves order', status: 'FAILED', ...dbFailure(7) },
    ]);
    const keys = async (q: string) =>
      (await failures(`?q=${encodeURIComponent(q)}`)).content.map((s) => s.key).sort();
    expect(await keys('gateway')).toEqual(['Payment gateway timeout after <n> s']);
    expect(await keys('TIMEOUT payment')).toEqual(['Payment gateway timeout after <n> s']);
    expect(await keys('refused: db-1:')).toEqual([DB_KEY]);
    expect(await keys('connection REFUSED')).toEqual([DB_KEY]);
    expect(await keys('ment')).toEqual([
      'Element not found: .dashboard-metrics',
      'Payment gateway timeout after <n> s',
    ]);
    expect(await keys('100% off_')).toEqual([]);

    const fresh = await failures('?new=true&sort=firstSeen,desc');
    expect(fresh.content.map((s) => s.key).sort()).toEqual([
      'Element not found: .dashboard-metrics',
      'Payment gateway timeout after <n> s',
    ]);
    expect(fresh.content.every((s) => (s.firstSeen as { runId: number }).runId === latest)).toBe(true);
    const byOccurrences = await failures('?sort=occurrences,desc');
    expect(byOccurrences.content[0].id).toBe(signatureId);
  });

  it('lists similar signatures most similar first, and suggests a triage for a new one like a triaged one', async () => {
    await v1Run('nightly 6', undefined, [
      {
        name: 'checks out',
        status: 'FAILED',
        message: 'Checkout failed: payment provider answered 502 for order 7f3a9c21d',
      },
      {
        name: 'checks out basket',
        status: 'FAILED',
        message: 'Checkout failed: payment provider answered 503 for basket 8e1b2c3d',
      },
      { name: 'ships', status: 'FAILED', message: 'Checkout failed: shipping provider unreachable' },
      { name: 'logs in', status: 'FAILED', message: 'Login page shows a blank screen' },
    ]);
    const base = await byKey(CHECKOUT);
    const similar = (await get(`/api/failures/${base.id}/similar`).expect(200)).body as {
      signature: { key: string };
      similarity: number;
    }[];
    expect(similar.map((s) => s.signature.key)).toEqual([
      'Checkout failed: payment provider answered <n> for basket <id>',
      'Checkout failed: shipping provider unreachable',
    ]);
    expect(similar[0].similarity).toBeGreaterThan(similar[1].similarity);

    await patch(`/api/failures/${base.id}`, {
      triage: 'PRODUCT_BUG',
      issue: { url: 'http://tracker.example.com/PAY-1', key: 'PAY-1' },
    }).expect(200);
    await v1Run('nightly 7', undefined, [
      {
        name: 'checks out again',
        status: 'FAILED',
        message: 'Checkout failed: payment provider answered 504 for order 9a8b7c6d5 (retrying)',
      },
      {
        name: 'ships again',
        status: 'FAILED',
        message: 'Checkout failed: shipping provider unreachable for zone 4',
      },
    ]);
    const suggested = await byKey(`${CHECKOUT} (retrying)`);
    expect(suggested).toMatchObject({
      triage: 'PRODUCT_BUG',
      issue: { url: 'http://tracker.example.com/PAY-1', key: 'PAY-1' },
      suggested: { fromId: base.id, similarity: expect.any(Number) },
    });
    expect((suggested.suggested as { similarity: number }).similarity).toBeGreaterThanOrEqual(0.8);
    // Less similar than triage.similarity (0.8): nothing suggested.
    expect(await byKey('Checkout failed: shipping provider unreachable for zone <n>')).toMatchObject({
      triage: 'TO_INVESTIGATE',
      suggested: null,
    });

    // A person's triage ends the suggestion; the triage stays what they say.
    const confirmed = await patch(`/api/failures/${suggested.id}`, { note: 'Same as PAY-1' }).expect(200);
    expect(confirmed.body).toMatchObject({ triage: 'PRODUCT_BUG', suggested: null, note: 'Same as PAY-1' });
  });

  it('checks roles: VIEWER reads, REPORTER triages, another project answers 404', async () => {
    await get(`/api/failures/${signatureId}`, viewer.jwt).expect(200);
    await get(`/api/projects/${projectId}/failures`, viewer.jwt).expect(200);
    await patch(`/api/failures/${signatureId}`, { triage: 'NO_DEFECT' }, viewer.jwt).expect(403);
    const reporter = await member('REPORTER');
    await patch(`/api/failures/${signatureId}`, { triage: 'SYSTEM_ISSUE' }, reporter.jwt).expect(200);

    await get(`/api/failures/${signatureId}`, stranger.jwt).expect(404);
    await get(`/api/failures/${signatureId}/similar`, stranger.jwt).expect(404);
    await patch(`/api/failures/${signatureId}`, { triage: 'NO_DEFECT' }, stranger.jwt).expect(404);
    await get(`/api/projects/${projectId}/failures`, stranger.jwt).expect(404);
    await get('/api/failures/999999999').expect(404);
    await get('/api/failures/abc').expect(404);

    // A signature of another project: 404 to a member of this one only.
    await v1Run(
      'other 1',
      '2026-11-20T01:00:00Z',
      [{ name: 'x', status: 'FAILED', message: 'elsewhere' }],
      otherProjectId,
    );
    const elsewhere = (await failures('', otherProjectId)).content[0];
    await get(`/api/failures/${elsewhere.id}`, viewer.jwt).expect(404);
    await patch(`/api/failures/${elsewhere.id}`, { triage: 'NO_DEFECT' }, reporter.jwt).expect(404);
  });

  it('refuses bad input with 400 and says why', async () => {
    const bad = async (body: object, message: RegExp) => {
      const res = await patch(`/api/failures/${signatureId}`, body).expect(400);
      expect(res.body).toMatchObject({
        status: 400,
        error: expect.any(String),
        message: expect.stringMatching(message),
      });
    };
    await bad({ issue: { url: 'javascript:alert(1)' } }, /issue\.url must be an http or https URL/);
    await bad({ issue: { url: 'data:text/html,<script>alert(1)</script>' } }, /http or https/);
    await bad({ issue: { url: 'not a url' } }, /http or https/);
    await bad({ issue: { key: 'X-1' } }, /issue\.url/);
    await bad(
      { triage: 'WONT_FIX' },
      /triage must be one of: TO_INVESTIGATE, PRODUCT_BUG, AUTOMATION_BUG, SYSTEM_ISSUE, NO_DEFECT/,
    );
    // A signature always has a triage: null is refused by name (it was a 500), with the rest of the change.
    await bad({ triage: null, note: 'kept out' }, /triage must be one of/);
    await bad({ note: 'x'.repeat(2001) }, /note must be at most 2000 characters/);
    await bad({ assigneeId: stranger.id }, new RegExp(`assigneeId ${stranger.id} is no user who can see`));
    await bad({ assigneeId: 'me' }, /assigneeId must be a user id/);
    await bad({ priority: 1 }, /priority/);
    await get(`/api/projects/${projectId}/failures?triage=WONT_FIX`).expect(400);
    await get(`/api/projects/${projectId}/failures?sort=key,asc`).expect(400);
    await get(`/api/projects/${projectId}/failures?assignee=someone`).expect(400);

    // Nothing of it was stored.
    expect((await get(`/api/failures/${signatureId}`).expect(200)).body).toMatchObject({
      triage: 'SYSTEM_ISSUE',
      issue: { url: 'https://jira.example.com/browse/SHOP-7' },
    });
    // An issue can be removed, an assignee too.
    expect(
      (await patch(`/api/failures/${signatureId}`, { issue: null, assigneeId: null }).expect(200)).body,
    ).toMatchObject({
      issue: null,
      assignee: null,
    });
  });

  it('finds words and similar keys by the trigram indexes (EXPLAIN)', async () => {
    // A project of 10,000 signatures, so that the planner weighs the indexes against reading them all.
    const [{ id: runId }] = await svc.dataSource.query(
      `INSERT INTO runs (project_id, name, stream) VALUES ($1, 'seed', 'seed') RETURNING id`,
      [otherProjectId],
    );
    await svc.dataSource.query(
      `INSERT INTO failure_signatures (project_id, key, sample_message, first_run_id, first_seen_at, last_run_id, last_seen_at, occurrences)
       SELECT $1, k, k, $2, now(), $2, now(), 1 FROM (
         SELECT format('%s failed in module %s with code %s: %s', md5(i::text), i % 97, md5((i * 7)::text),
                       repeat('the service answered an error ', 10)) AS k
           FROM generate_series(1, 10000) i) s`,
      [otherProjectId, runId],
    );
    await svc.dataSource.query('ANALYZE failure_signatures');
    const plan = async (sql: string, params: unknown[]) =>
      (await svc.dataSource.query(`EXPLAIN ${sql}`, params))
        .map((r: { 'QUERY PLAN': string }) => r['QUERY PLAN'])
        .join('\n');

    const search = listQuery(
      String(otherProjectId),
      { words: ['c4ca4238a0b9'] },
      {
        page: 0,
        size: 20,
        offset: 0,
        sort: [{ field: 'lastSeen', direction: 'DESC' }],
      },
    );
    expect(await plan(search.sql, search.params)).toMatch(
      /Index Scan (on|using) ix_failure_signatures_search_trgm/,
    );
    const [probe] = await svc.dataSource.query(
      `SELECT id, project_id, key FROM failure_signatures WHERE project_id = $1 ORDER BY id LIMIT 1`,
      [otherProjectId],
    );
    expect(await plan(SIMILAR_SQL, [probe.project_id, probe.key, probe.id])).toMatch(
      /Index Scan (on|using) ix_failure_signatures_key_trgm/,
    );
  });
});
