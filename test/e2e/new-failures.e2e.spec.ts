import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { insertUser } from '../factories/user.factory.js';
import { RunningApp, TestDeployment } from '../support/app.js';
import { eventually, login } from '../support/http.js';

type Status = 'PASSED' | 'FAILED' | 'BROKEN';

/**
 * A run's `newFailures`: its tests NEW_FAILURE against the run before in its stream, the way compare counts them,
 * stored as it finishes through V1, V2 or an import; null while it runs and when it has no run before.
 */
describe('New failures of a run', () => {
  const deployment = new TestDeployment();
  let svc: RunningApp;
  let jwt: string;
  let token: string;
  let projectId: number;

  const get = (path: string) => request(svc.url).get(path).set('Authorization', `Bearer ${jwt}`);
  const post = (path: string, body: object, as = jwt) =>
    request(svc.url).post(path).set('Authorization', `Bearer ${as}`).send(body);

  /** A V1 run of the stream with these outcomes (suite S), finished unless told. */
  async function v1Run(stream: string, startedAt: string, outcomes: Record<string, Status>, finish = true) {
    const run = (
      await post(`/api/projects/${projectId}/runs`, { name: `${stream} run`, stream, startedAt }).expect(201)
    ).body;
    const results = Object.entries(outcomes).map(([name, status]) => ({ name, suite: 'S', status }));
    await post(`/api/runs/${run.id}/results`, { results }).expect(201);
    if (finish) {
      await post(`/api/runs/${run.id}/finish`, {}).expect(200);
    }
    return (await get(`/api/runs/${run.id}`).expect(200)).body as { id: number; newFailures: number | null };
  }

  const listed = async () =>
    new Map<number, number | null>(
      (await get(`/api/projects/${projectId}/runs?size=100`).expect(200)).body.content.map(
        (r: { id: number; newFailures: number | null }) => [r.id, r.newFailures],
      ),
    );

  beforeAll(async () => {
    [svc] = await deployment.start();
    const user = await insertUser(svc.dataSource);
    jwt = (await login(svc.url, user.email, user.password)).accessToken;
    projectId = (await post('/api/projects', { key: 'NEWF', name: 'New failures' }).expect(201)).body.id;
    token = (await post('/api/users/me/api-keys', { name: 'ci' }).expect(201)).body.token;
  });
  afterAll(() => deployment.stop());

  it("counts against the stream's previous finished run, as compare does, through V1, an import and V2", async () => {
    // The stream's first run: nothing to compare with, null (in progress too).
    const first = await v1Run('nf', '2026-11-20T01:00:00Z', { a: 'PASSED', b: 'FAILED', c: 'PASSED' }, false);
    expect(first.newFailures).toBeNull();
    await post(`/api/runs/${first.id}/finish`, {}).expect(200);
    expect((await get(`/api/runs/${first.id}`).expect(200)).body.newFailures).toBeNull();

    // Another stream's run in between, failing everything: not the run before of the next one.
    const other = await v1Run('other', '2026-11-20T12:00:00Z', { a: 'FAILED', b: 'FAILED', c: 'FAILED' });
    expect(other.newFailures).toBeNull();

    // a newly failing: new; b failing in both runs: not.
    const second = await v1Run('nf', '2026-11-21T01:00:00Z', { a: 'FAILED', b: 'FAILED', c: 'PASSED' });
    expect(second.newFailures).toBe(1);
    const compared = (await get(`/api/runs/${second.id}/compare`).expect(200)).body;
    expect(compared.base.id).toBe(first.id);
    expect(compared.summary.newFailures).toBe(1);

    // An import of the stream (started now, after the V1 runs): c newly failing; d failing but new to the stream
    // (compare's ADDED), a still failing, b fixed.
    const xml = `<testsuite name="S">
      <testcase classname="S" name="a"><failure message="still"/></testcase>
      <testcase classname="S" name="b"/>
      <testcase classname="S" name="c"><failure message="new"/></testcase>
      <testcase classname="S" name="d"><failure message="added"/></testcase>
    </testsuite>`;
    const { runId } = (
      await request(svc.url)
        .post(`/api/import/junit?projectId=${projectId}&stream=nf`)
        .set('Authorization', `Bearer ${jwt}`)
        .set('Content-Type', 'application/xml')
        .send(xml)
        .expect(201)
    ).body;
    const imported = (await get(`/api/runs/${runId}`).expect(200)).body;
    expect(imported.newFailures).toBe(1);
    expect((await get(`/api/runs/${imported.id}/compare`).expect(200)).body.summary).toMatchObject({
      newFailures: 1,
      stillFailing: 1,
      fixed: 1,
      added: 1,
    });

    // V2, once its finish message is processed: b newly failing again, a passing, c and d still failing.
    const uuid = randomUUID();
    await post(`/api/v2/projects/${projectId}/runs`, { uuid, name: 'nf v2', stream: 'nf' }, token).expect(
      202,
    );
    const results = Object.entries({ a: 'PASSED', b: 'FAILED', c: 'FAILED', d: 'BROKEN' }).map(
      ([name, status]) => ({
        uuid: randomUUID(),
        name,
        suite: 'S',
        status,
      }),
    );
    await post(`/api/v2/projects/${projectId}/runs/${uuid}/results`, { results }, token).expect(202);
    await post(`/api/v2/projects/${projectId}/runs/${uuid}/finish`, {}, token).expect(202);
    const v2 = await eventually(async () => {
      const r = await request(svc.url)
        .get(`/api/v2/projects/${projectId}/runs/${uuid}`)
        .set('Authorization', `Bearer ${token}`);
      return r.status === 200 && r.body.status === 'FINISHED' ? (r.body as { id: number }) : undefined;
    });
    const v2Run = (await get(`/api/runs/${v2.id}`).expect(200)).body;
    expect(v2Run.newFailures).toBe(1);
    expect((await get(`/api/runs/${v2.id}/compare`).expect(200)).body.summary.newFailures).toBe(1);

    // The runs list carries the same numbers.
    expect(Object.fromEntries(await listed())).toEqual({
      [first.id]: null,
      [other.id]: null,
      [second.id]: 1,
      [imported.id]: 1,
      [v2.id]: 1,
    });
  });

  it('counts a flip between runs of one commit as flaky, not new, as compare does', async () => {
    const attributes = { commit: 'abc1234' };
    const run = async (startedAt: string, status: Status) => {
      const r = (
        await post(`/api/projects/${projectId}/runs`, {
          name: 'rev',
          stream: 'rev',
          startedAt,
          attributes,
        }).expect(201)
      ).body;
      await post(`/api/runs/${r.id}/results`, { results: [{ name: 'x', suite: 'S', status }] }).expect(201);
      return (await post(`/api/runs/${r.id}/finish`, {}).expect(200)).body as {
        id: number;
        newFailures: number | null;
      };
    };
    expect((await run('2026-11-20T01:00:00Z', 'PASSED')).newFailures).toBeNull();
    const flipped = await run('2026-11-21T01:00:00Z', 'FAILED');
    expect(flipped.newFailures).toBe(0);
    expect((await get(`/api/runs/${flipped.id}/compare`).expect(200)).body.summary).toMatchObject({
      newFailures: 0,
      flaky: 1,
    });
  });
});
