import request from 'supertest';
import { insertUser } from '../factories/user.factory.js';
import { RunningApp, TestDeployment } from '../support/app.js';
import { eventually, login } from '../support/http.js';
import { ResultsObservers, type DeletedResults } from '../../src/results/results-observers.js';
import { addBulkResults } from '../support/bulk-results.js';

type Status = 'PASSED' | 'FAILED' | 'BROKEN' | 'SKIPPED';
/** A test's outcome in a run: a status, or a failing one with its message. */
type Outcome = Status | { status: Status; message: string };
/** A failure signature as the API shows it (API.md, "Failure triage across runs"). */
interface Signature {
  id: number;
  key: string;
  occurrences: number;
  tests: number;
  runs: number;
  firstSeen: { runId: number; at: string };
  lastSeen: { runId: number; at: string };
  triage: string;
  issue: { url: string } | null;
  suggested: { fromId: number; similarity: number } | null;
}
const DAY = 86_400_000;
const daysAgo = (n: number) => new Date(Date.now() - n * DAY).toISOString();

/**
 * Retention (API.md, "Retention"): a project's policy, pinned runs, a pass now and the scheduled cleanup, and the
 * deletes of runs and projects that answer at once and purge in the background.
 */
describe('Retention', () => {
  const deployment = new TestDeployment({ SVC_RETENTION_BATCH: '2000', SVC_RETENTION_PAUSE_MS: '10' });
  let svc: RunningApp;
  let owner: string;
  let maintainer: string;
  let viewer: string;
  let adminJwt: string;
  let maintainerId: string;
  let viewerId: string;
  const deleted: DeletedResults[] = [];

  const as = (jwt: string) => ({
    get: (path: string) => request(svc.url).get(path).set('Authorization', `Bearer ${jwt}`),
    post: (path: string, body: object = {}) =>
      request(svc.url).post(path).set('Authorization', `Bearer ${jwt}`).send(body),
    put: (path: string, body: object = {}) =>
      request(svc.url).put(path).set('Authorization', `Bearer ${jwt}`).send(body),
    patch: (path: string, body: object) =>
      request(svc.url).patch(path).set('Authorization', `Bearer ${jwt}`).send(body),
    del: (path: string) => request(svc.url).delete(path).set('Authorization', `Bearer ${jwt}`),
  });

  async function project(key: string): Promise<number> {
    const id = (await as(owner).post('/api/projects', { key, name: key }).expect(201)).body.id as number;
    await as(owner).put(`/api/projects/${id}/members/${maintainerId}`, { role: 'MAINTAINER' }).expect(200);
    await as(owner).put(`/api/projects/${id}/members/${viewerId}`, { role: 'VIEWER' }).expect(200);
    return id;
  }

  /** A V1 run started at `startedAt` with these outcomes (suite S), finished unless told. */
  async function run(
    projectId: number,
    name: string,
    startedAt: string,
    outcomes: Record<string, Outcome>,
    finish = true,
  ) {
    const created = (await as(owner).post(`/api/projects/${projectId}/runs`, { name, startedAt }).expect(201))
      .body;
    const results = Object.entries(outcomes).map(([test, outcome]) => ({
      name: test,
      suite: 'S',
      ...(typeof outcome === 'string' ? { status: outcome } : outcome),
    }));
    await as(owner).post(`/api/runs/${created.id}/results`, { results }).expect(201);
    if (finish) {
      await as(owner)
        .post(`/api/runs/${created.id}/finish`, {
          finishedAt: new Date(Date.parse(startedAt) + 1000).toISOString(),
        })
        .expect(200);
    }
    return created.id as number;
  }

  const runIds = async (projectId: number) =>
    (
      (await as(viewer).get(`/api/projects/${projectId}/runs?size=100&sort=id,asc`).expect(200)).body
        .content as { id: number }[]
    ).map((r) => r.id);
  const tests = async (projectId: number, q = '') =>
    (await as(viewer).get(`/api/projects/${projectId}/tests?size=100&q=${q}`).expect(200)).body.content as {
      id: number;
      name: string;
      lastStatus: Status | null;
    }[];
  const historyRuns = async (projectId: number, testId: number) =>
    (
      (await as(viewer).get(`/api/projects/${projectId}/tests/${testId}/history?size=100`).expect(200)).body
        .content as { runId: number }[]
    ).map((h) => h.runId);
  const signatures = async (projectId: number) =>
    (await as(viewer).get(`/api/projects/${projectId}/failures?size=100`).expect(200)).body
      .content as Signature[];
  const signature = async (id: number) =>
    (await as(viewer).get(`/api/failures/${id}`).expect(200)).body as Signature & {
      recentRuns: { runId: number; count: number }[];
      topTests: { testId: number; name: string; count: number }[];
    };
  /** The rows failure signatures keep of these runs: their failing results' signatures and their link rows. */
  const signatureRowsOf = async (runs: number[]) =>
    (
      await svc.dataSource.query(
        `SELECT (SELECT count(*) FROM failure_results WHERE run_id = ANY($1::bigint[]))::int AS results,
                (SELECT count(*) FROM failure_signature_runs WHERE run_id = ANY($1::bigint[]))::int AS links`,
        [runs],
      )
    )[0] as { results: number; links: number };
  const storedResults = async (runId: number) =>
    Number((await svc.dataSource.query('SELECT count(*) AS n FROM results WHERE run_id = $1', [runId]))[0].n);

  beforeAll(async () => {
    [svc] = await deployment.start();
    svc.app.get(ResultsObservers).register({ resultsDeleted: async (_tx, d) => void deleted.push(d) });
    const users = await Promise.all([
      insertUser(svc.dataSource),
      insertUser(svc.dataSource),
      insertUser(svc.dataSource),
    ]);
    const admin = await insertUser(svc.dataSource, { admin: true });
    [owner, maintainer, viewer, adminJwt] = await Promise.all(
      [...users, admin].map(async (u) => (await login(svc.url, u.email, u.password)).accessToken),
    );
    maintainerId = String(users[1].id);
    viewerId = String(users[2].id);
  });
  afterAll(() => deployment.stop());

  it('lets only an OWNER change retention, within 1..100000 for each bound, each wrong field named', async () => {
    const p = await project('RETROLES');
    const settings = `/api/projects/${p}/settings`;
    expect((await as(viewer).get(settings).expect(200)).body.retention).toEqual({
      keepDays: null,
      keepRuns: null,
    });
    const forbidden = await as(maintainer)
      .patch(settings, { retention: { keepRuns: 10 } })
      .expect(403);
    expect(forbidden.body).toMatchObject({ status: 403, error: 'Forbidden' });
    // A MAINTAINER still changes the other groups.
    await as(maintainer)
      .patch(settings, { triage: { similarity: 0.5 } })
      .expect(200);

    for (const [body, field] of [
      [{ keepDays: 0 }, 'retention.keepDays'],
      [{ keepDays: -3 }, 'retention.keepDays'],
      [{ keepRuns: 100_001 }, 'retention.keepRuns'],
      [{ keepRuns: 2.5 }, 'retention.keepRuns'],
      [{ keepDays: '30' }, 'retention.keepDays'],
    ] as const) {
      const res = await as(owner).patch(settings, { retention: body }).expect(400);
      expect(res.body).toMatchObject({ status: 400, error: 'Bad Request' });
      expect(res.body.message).toContain(field);
    }
    const both = await as(owner)
      .patch(settings, { retention: { keepDays: 0, keepRuns: 0 } })
      .expect(400);
    expect(both.body.message).toContain('retention.keepDays');
    expect(both.body.message).toContain('retention.keepRuns');

    const saved = await as(owner)
      .patch(settings, { retention: { keepDays: 100_000, keepRuns: 1 } })
      .expect(200);
    expect(saved.body.retention).toEqual({ keepDays: 100_000, keepRuns: 1 });

    // The pass now: OWNER only; the preview: any member, bounds checked the same way.
    await as(maintainer).post(`/api/projects/${p}/retention/run`).expect(403);
    await as(viewer).get(`/api/projects/${p}/retention/preview`).expect(200);
    const badPreview = await as(viewer)
      .get(`/api/projects/${p}/retention/preview?keepDays=0&keepRuns=100001`)
      .expect(400);
    expect(badPreview.body.message).toContain('keepDays');
    expect(badPreview.body.message).toContain('keepRuns');
  });

  it('pins and unpins a run (MAINTAINER), and shows pinned on every run shape', async () => {
    const p = await project('RETPIN');
    const id = await run(p, 'nightly #1', daysAgo(1), { a: 'PASSED' });
    expect((await as(viewer).get(`/api/runs/${id}`).expect(200)).body.pinned).toBe(false);
    await as(viewer).put(`/api/runs/${id}/pin`).expect(403);
    const pinned = await as(maintainer).put(`/api/runs/${id}/pin`).expect(200);
    expect(pinned.body).toMatchObject({ id, pinned: true });
    expect((await as(viewer).get(`/api/projects/${p}/runs`).expect(200)).body.content[0].pinned).toBe(true);
    await as(viewer).del(`/api/runs/${id}/pin`).expect(403);
    await as(maintainer).del(`/api/runs/${id}/pin`).expect(204);
    expect((await as(viewer).get(`/api/runs/${id}`).expect(200)).body.pinned).toBe(false);
    await as(maintainer).put(`/api/runs/999999999/pin`).expect(404);
  });

  it('keeps the newest keepRuns finished runs, pinned and in-progress ones, and removes the rest with their results and tests', async () => {
    const p = await project('RETRUNS');
    // Oldest first. `gone` only ran in the runs that go; `kept` in every run.
    const r1 = await run(p, 'nightly #1', daysAgo(10), { kept: 'PASSED', gone: 'FAILED', flip: 'PASSED' });
    const r2 = await run(p, 'nightly #2', daysAgo(9), { kept: 'FAILED', gone: 'PASSED', flip: 'FAILED' });
    const pinnedRun = await run(p, 'nightly #3', daysAgo(8), { kept: 'PASSED', flip: 'PASSED' });
    const inProgress = await run(p, 'nightly #4', daysAgo(7), { kept: 'PASSED' }, false);
    const r5 = await run(p, 'nightly #5', daysAgo(6), { kept: 'PASSED', flip: 'FAILED' });
    const r6 = await run(p, 'nightly #6', daysAgo(5), { kept: 'BROKEN', flip: 'PASSED' });
    await as(maintainer).put(`/api/runs/${pinnedRun}/pin`).expect(200);
    const before = await tests(p);
    const gone = before.find((t) => t.name === 'gone')!;
    const kept = before.find((t) => t.name === 'kept')!;
    // `flip` flipped at each of its 5 runs: flaky by its flip rate (at least flaky.minRuns 5 runs).
    const flip = before.find((t) => t.name === 'flip')!;
    const testCase = async (id: number) =>
      (await as(viewer).get(`/api/projects/${p}/tests/${id}`).expect(200)).body;
    expect(await testCase(flip.id)).toMatchObject({ flaky: true, state: 'FLAKY', runs: 5 });
    expect(await historyRuns(p, kept.id)).toEqual([r6, r5, inProgress, pinnedRun, r2, r1]);

    // Before it is saved, the preview says what the policy would remove: r1 and r2 (6 results).
    const preview = await as(viewer).get(`/api/projects/${p}/retention/preview?keepRuns=2`).expect(200);
    expect(preview.body).toEqual({ runs: 2, results: 6 });
    expect((await as(viewer).get(`/api/projects/${p}/retention/preview`).expect(200)).body).toEqual({
      runs: 0,
      results: 0,
    });

    await as(owner)
      .patch(`/api/projects/${p}/settings`, { retention: { keepRuns: 2 } })
      .expect(200);
    deleted.length = 0;
    const pass = await as(owner).post(`/api/projects/${p}/retention/run`).expect(200);
    expect(pass.body).toEqual({ runsDeleted: 2, resultsDeleted: 6 });

    expect(await runIds(p)).toEqual([pinnedRun, inProgress, r5, r6]);
    await as(viewer).get(`/api/runs/${r1}`).expect(404);
    await as(viewer).get(`/api/runs/${r2}/results`).expect(404);
    expect(await storedResults(r1)).toBe(0);
    expect(await storedResults(r2)).toBe(0);
    expect(await historyRuns(p, kept.id)).toEqual([r6, r5, inProgress, pinnedRun]);
    // The test case left without results is gone; the others keep their last status.
    const after = await tests(p);
    expect(after.map((t) => t.name).sort()).toEqual(['flip', 'kept']);
    await as(viewer).get(`/api/projects/${p}/tests/${gone.id}`).expect(404);
    expect(after.find((t) => t.name === 'kept')!.lastStatus).toBe('BROKEN');
    // Test health recounted from the outcomes left: `flip` has 3 runs now, too few for its flip rate to count.
    expect(await testCase(flip.id)).toMatchObject({
      flaky: false,
      state: 'HEALTHY',
      runs: 3,
      lastStatus: 'PASSED',
    });
    expect(await testCase(kept.id)).toMatchObject({ state: 'FAILING', lastStatus: 'BROKEN' });
    // Counts of the runs kept are untouched.
    expect((await as(viewer).get(`/api/runs/${r6}`).expect(200)).body.counts).toMatchObject({
      total: 2,
      broken: 1,
      passed: 1,
    });

    // The results observers were told which runs and tests lost results, so derived state is recounted.
    const told = deleted.filter((d) => d.projectId === String(p));
    expect([...new Set(told.flatMap((d) => d.runIds))].sort()).toEqual([String(r1), String(r2)].sort());
    expect([...new Set(told.flatMap((d) => d.testIds))].sort()).toEqual(
      [String(kept.id), String(gone.id), String(before.find((t) => t.name === 'flip')!.id)].sort(),
    );

    // A second pass finds nothing more; a new result of `gone` makes a new test case, as for any new test.
    expect((await as(owner).post(`/api/projects/${p}/retention/run`).expect(200)).body).toEqual({
      runsDeleted: 0,
      resultsDeleted: 0,
    });
    const r7 = await run(p, 'nightly #7', daysAgo(0), { gone: 'PASSED' });
    const again = (await tests(p)).find((t) => t.name === 'gone')!;
    expect(again.id).not.toBe(gone.id);
    expect(await historyRuns(p, again.id)).toEqual([r7]);

    // Audited, and counted in the metrics.
    const details = await eventually(async () => {
      const audit = await as(adminJwt).get(`/api/admin/audit?type=RETENTION_CLEANUP&size=100`).expect(200);
      const found = (audit.body.content as { details: Record<string, number> }[])
        .map((e) => e.details)
        .filter((d) => d.projectId === p);
      return found.length >= 2 ? found : undefined;
    });
    expect(details).toContainEqual({ projectId: p, runsDeleted: 2, resultsDeleted: 6 });
    const metrics = (await request(svc.url).get('/metrics').expect(200)).text;
    expect(metrics).toMatch(/tms_retention_deleted_total\{kind="results"\} \d+/);
    expect(metrics).toMatch(/tms_retention_deleted_total\{kind="runs"\} \d+/);
    expect(metrics).toMatch(/tms_retention_deleted_total\{kind="tests"\} \d+/);
  });

  it('removes finished runs started more than keepDays ago, but not a pinned or an unfinished one', async () => {
    const p = await project('RETDAYS');
    const old = await run(p, 'weekly #1', daysAgo(40), { a: 'PASSED', b: 'FAILED' });
    const oldPinned = await run(p, 'weekly #2', daysAgo(39), { a: 'PASSED' });
    const oldRunning = await run(p, 'weekly #3', daysAgo(38), { a: 'FAILED' }, false);
    const recent = await run(p, 'weekly #4', daysAgo(2), { a: 'PASSED' });
    await as(maintainer).put(`/api/runs/${oldPinned}/pin`).expect(200);
    expect(
      (await as(viewer).get(`/api/projects/${p}/retention/preview?keepDays=30`).expect(200)).body,
    ).toEqual({ runs: 1, results: 2 });
    await as(owner)
      .patch(`/api/projects/${p}/settings`, { retention: { keepDays: 30 } })
      .expect(200);
    expect((await as(owner).post(`/api/projects/${p}/retention/run`).expect(200)).body).toEqual({
      runsDeleted: 1,
      resultsDeleted: 2,
    });
    expect(await runIds(p)).toEqual([oldPinned, oldRunning, recent]);
    expect(await storedResults(old)).toBe(0);
    expect((await tests(p)).map((t) => t.name)).toEqual(['a']);

    // Unpinned, the old run goes at the next pass.
    await as(maintainer).del(`/api/runs/${oldPinned}/pin`).expect(204);
    expect((await as(owner).post(`/api/projects/${p}/retention/run`).expect(200)).body).toEqual({
      runsDeleted: 1,
      resultsDeleted: 1,
    });
    expect(await runIds(p)).toEqual([oldRunning, recent]);
  });

  it('recounts failure signatures from the runs kept, and deletes those only removed runs had, after a cleanup and after DELETE /api/runs/{id}', async () => {
    const p = await project('RETSIGS');
    await as(owner)
      .patch(`/api/projects/${p}/settings`, { triage: { similarity: 0.5 } })
      .expect(200);
    const checkout = (n: number): Outcome => ({
      status: 'FAILED',
      message: `Checkout failed for order ${n}`,
    });
    const stockMessage = (n: number) =>
      `Stock service unreachable at inventory.internal after ${n} ms while reserving the basket`;
    const stock = (n: number): Outcome => ({ status: 'FAILED', message: stockMessage(n) });
    const at = [daysAgo(10), daysAgo(9), daysAgo(8), daysAgo(7)];
    // Oldest first. `checkout` fails in every run (tests a, d, c); `stock` only in the two runs that go.
    const r1 = await run(p, 'nightly #1', at[0], { a: checkout(1), d: checkout(2), b: stock(1) });
    const r2 = await run(p, 'nightly #2', at[1], { a: checkout(3), b: stock(2) });
    const bySignatureKey = async (key: string) => (await signatures(p)).find((s) => s.key === key)!;
    const stockSig = await bySignatureKey(
      'Stock service unreachable at inventory.internal after <n> ms while reserving the basket',
    );
    // Triaged: a like failure of a later run takes its triage as a suggestion.
    await as(owner)
      .patch(`/api/failures/${stockSig.id}`, {
        triage: 'PRODUCT_BUG',
        issue: { url: 'http://tracker.example.com/INV-1' },
      })
      .expect(200);
    const r3 = await run(p, 'nightly #3', at[2], { a: checkout(4), d: 'PASSED', b: 'PASSED' });
    const r4 = await run(p, 'nightly #4', at[3], {
      a: checkout(5),
      c: checkout(6),
      e: { status: 'BROKEN', message: `${stockMessage(3)} (retrying)` },
    });
    const checkoutSig = await bySignatureKey('Checkout failed for order <n>');
    const again = (await signatures(p)).find((s) => s.key.endsWith('(retrying)'))!;
    expect(checkoutSig).toMatchObject({
      occurrences: 6,
      tests: 3,
      runs: 4,
      firstSeen: { runId: r1, at: at[0] },
      lastSeen: { runId: r4, at: at[3] },
    });
    expect(await signature(stockSig.id)).toMatchObject({ occurrences: 2, tests: 1, runs: 2 });
    expect(again).toMatchObject({ triage: 'PRODUCT_BUG', suggested: { fromId: stockSig.id } });

    // The cleanup removes r1 and r2.
    await as(owner)
      .patch(`/api/projects/${p}/settings`, { retention: { keepRuns: 2 } })
      .expect(200);
    expect((await as(owner).post(`/api/projects/${p}/retention/run`).expect(200)).body).toEqual({
      runsDeleted: 2,
      resultsDeleted: 5,
    });
    // `checkout` is counted from r3 and r4 alone: 3 failing results of tests a and c (d failed only in r1).
    const recounted = {
      occurrences: 3,
      tests: 2,
      runs: 2,
      firstSeen: { runId: r3, at: at[2] },
      lastSeen: { runId: r4, at: at[3] },
    };
    expect((await signatures(p)).find((s) => s.id === checkoutSig.id)).toMatchObject(recounted);
    const detail = await signature(checkoutSig.id);
    expect(detail).toMatchObject(recounted);
    expect(detail.recentRuns.map((r) => [r.runId, r.count])).toEqual([
      [r4, 2],
      [r3, 1],
    ]);
    expect(detail.topTests.map((t) => [t.name, t.count])).toEqual([
      ['a', 2],
      ['c', 1],
    ]);
    // `stock` had failures in the removed runs only: gone from the list and from its address.
    await as(viewer).get(`/api/failures/${stockSig.id}`).expect(404);
    expect((await signatures(p)).map((s) => s.id).sort()).toEqual([checkoutSig.id, again.id].sort());
    // The signature that took its triage keeps the triage and issue, no longer a suggestion of a signature gone.
    expect(await signature(again.id)).toMatchObject({
      triage: 'PRODUCT_BUG',
      issue: { url: 'http://tracker.example.com/INV-1' },
      suggested: null,
      occurrences: 1,
    });
    expect(await signatureRowsOf([r1, r2])).toEqual({ results: 0, links: 0 });
    // The run kept still names its failures' signatures.
    const groups = (await as(viewer).get(`/api/runs/${r3}/failure-groups`).expect(200)).body.content as {
      signatureId: number;
      isNew: boolean;
    }[];
    expect(groups).toMatchObject([{ signatureId: checkoutSig.id, isNew: true }]);

    // Deleting the latest run: `checkout` is left with r3 (last seen there too); the like failure only r4 had goes.
    await as(maintainer).del(`/api/runs/${r4}`).expect(204);
    await eventually(async () => ((await signatureRowsOf([r4])).links === 0 ? true : undefined), 30_000);
    await as(viewer).get(`/api/failures/${again.id}`).expect(404);
    const left = await signatures(p);
    expect(left.map((s) => s.id)).toEqual([checkoutSig.id]);
    expect(left[0]).toMatchObject({
      occurrences: 1,
      tests: 1,
      runs: 1,
      firstSeen: { runId: r3, at: at[2] },
      lastSeen: { runId: r3, at: at[2] },
    });
    expect((await signature(checkoutSig.id)).topTests.map((t) => [t.name, t.count])).toEqual([['a', 1]]);
    expect(await signatureRowsOf([r4])).toEqual({ results: 0, links: 0 });

    // A failure seen again later counts from there on; one whose signature went is new again.
    const r5 = await run(p, 'nightly #5', daysAgo(1), { a: checkout(7), b: stock(4) });
    expect((await signatures(p)).find((s) => s.id === checkoutSig.id)).toMatchObject({
      occurrences: 2,
      runs: 2,
      lastSeen: { runId: r5 },
    });
    const stockAgain = (await signatures(p)).find((s) => s.key === stockSig.key)!;
    expect(stockAgain.id).not.toBe(stockSig.id);
    expect(stockAgain).toMatchObject({ occurrences: 1, firstSeen: { runId: r5 } });
  });

  it('deletes a run of 200,000 results at once: hidden from every read, its results purged in the background', async () => {
    const p = await project('RETBIG');
    const small = await run(p, 'other', daysAgo(1), { t1: 'FAILED', t2: 'PASSED' });
    // The big run through V1 with t1, the rest of its 200,000 results stored directly (an import of them takes
    // over a minute on a loaded machine; the deletion is what is tested here).
    const big = await run(p, 'big', daysAgo(0), { t1: 'PASSED' });
    await addBulkResults(svc.dataSource, { projectId: p, runId: big, count: 199999, identitySeed: 'S' });
    expect(await storedResults(big)).toBe(200_000);
    const t1 = (await tests(p, 't1')).find((t) => t.name === 't1')!;
    expect(await historyRuns(p, t1.id)).toEqual([big, small]);

    await as(maintainer).del(`/api/runs/${big}`).expect(204);
    // Gone from every read at once, while its results are still being purged.
    await as(viewer).get(`/api/runs/${big}`).expect(404);
    await as(viewer).get(`/api/runs/${big}/results`).expect(404);
    expect(await runIds(p)).toEqual([small]);
    expect(await historyRuns(p, t1.id)).toEqual([small]);
    // Its tests' health (last status, flakiness) is recounted as the purge deletes their results.
    await eventually(
      async () =>
        (await tests(p, 't1')).find((t) => t.name === 't1')!.lastStatus === 'FAILED' ? true : undefined,
      120_000,
    );
    // A writer's batch to it fails cleanly; a second delete finds nothing.
    await as(owner)
      .post(`/api/runs/${big}/results`, { results: [{ name: 'late', status: 'PASSED' }] })
      .expect(404);
    await as(maintainer).del(`/api/runs/${big}`).expect(404);

    // Shortly after, its results and the test cases only it had are gone.
    await eventually(async () => ((await storedResults(big)) === 0 ? true : undefined), 120_000);
    await eventually(async () => {
      const [{ n }] = await svc.dataSource.query(
        'SELECT count(*)::int AS n FROM test_cases WHERE project_id = $1',
        [p],
      );
      return n === 2 ? true : undefined;
    }, 60_000);
    expect((await svc.dataSource.query('SELECT count(*)::int AS n FROM run_purges'))[0].n).toBe(0);
    expect(await storedResults(small)).toBe(2);
  }, 240_000);

  it('deletes a project at once, frees its key, and purges it in the background', async () => {
    const p = await project('RETPROJ');
    const r = await run(p, 'nightly #1', daysAgo(1), { a: 'PASSED', b: 'FAILED' });
    // Test cases of a project deleted by a replica on the code before TestCasesWithoutProjectForeignKey (whose
    // delete of the row no longer cascades to them): the purge deletes them too.
    const gone = 987_654_321;
    await svc.dataSource.query(
      `INSERT INTO test_cases (project_id, identity, name) SELECT $1::bigint, gen_random_uuid(), 'left ' || i
         FROM generate_series(1, 3) i`,
      [gone],
    );
    await as(viewer).del(`/api/projects/${p}`).expect(403);
    await as(owner).del(`/api/projects/${p}`).expect(204);
    await as(owner).get(`/api/projects/${p}`).expect(404);
    await as(owner).get(`/api/runs/${r}`).expect(404);
    await as(owner).get(`/api/projects/${p}/tests`).expect(404);
    await as(owner)
      .post(`/api/runs/${r}/results`, { results: [{ name: 'late', status: 'PASSED' }] })
      .expect(404);
    const listed = (await as(owner).get('/api/projects?size=500').expect(200)).body.content as {
      id: number;
    }[];
    expect(listed.map((x) => x.id)).not.toContain(p);
    await as(owner).del(`/api/projects/${p}`).expect(404);
    // The key is free for a new project at once.
    await as(owner).post('/api/projects', { key: 'RETPROJ', name: 'again' }).expect(201);
    await eventually(async () => {
      const [{ n }] = await svc.dataSource.query('SELECT count(*)::int AS n FROM projects WHERE id = $1', [
        p,
      ]);
      return n === 0 ? true : undefined;
    }, 60_000);
    expect(await storedResults(r)).toBe(0);
    expect(
      (await svc.dataSource.query('SELECT count(*)::int AS n FROM test_cases WHERE project_id = $1', [p]))[0]
        .n,
    ).toBe(0);
    await eventually(async () => {
      const [{ n }] = await svc.dataSource.query(
        'SELECT count(*)::int AS n FROM test_cases WHERE project_id = $1',
        [gone],
      );
      return n === 0 ? true : undefined;
    }, 60_000);
  });
});

describe('The scheduled retention cleanup', () => {
  const deployment = new TestDeployment({ SVC_RETENTION_INTERVAL: '1s' });
  let svc: RunningApp;
  let jwt: string;

  beforeAll(async () => {
    [svc] = await deployment.start();
    const user = await insertUser(svc.dataSource, { admin: true });
    jwt = (await login(svc.url, user.email, user.password)).accessToken;
  });
  afterAll(() => deployment.stop());

  it('applies each project’s policy every SVC_RETENTION_INTERVAL, audited', async () => {
    const post = (path: string, body: object = {}) =>
      request(svc.url).post(path).set('Authorization', `Bearer ${jwt}`).send(body);
    const p = (await post('/api/projects', { key: 'RETJOB', name: 'job' }).expect(201)).body.id as number;
    const ids: number[] = [];
    for (let i = 0; i < 4; i++) {
      const created = (
        await post(`/api/projects/${p}/runs`, { name: `n #${i}`, startedAt: daysAgo(4 - i) }).expect(201)
      ).body;
      await post(`/api/runs/${created.id}/results`, {
        results: [{ name: `t${i}`, status: 'PASSED' }],
      }).expect(201);
      await post(`/api/runs/${created.id}/finish`).expect(200);
      ids.push(created.id);
    }
    await request(svc.url)
      .patch(`/api/projects/${p}/settings`)
      .set('Authorization', `Bearer ${jwt}`)
      .send({ retention: { keepRuns: 1 } })
      .expect(200);
    const remaining = await eventually(async () => {
      const runs = (
        await request(svc.url)
          .get(`/api/projects/${p}/runs`)
          .set('Authorization', `Bearer ${jwt}`)
          .expect(200)
      ).body.content as { id: number }[];
      return runs.length === 1 ? runs.map((r) => r.id) : undefined;
    }, 30_000);
    expect(remaining).toEqual([ids[3]]);
    const audited = await eventually(async () => {
      const audit = await request(svc.url)
        .get('/api/admin/audit?type=RETENTION_CLEANUP')
        .set('Authorization', `Bearer ${jwt}`)
        .expect(200);
      return audit.body.content.length
        ? audit.body.content.map((e: { details: object }) => e.details)
        : undefined;
    });
    expect(audited).toContainEqual({ projectId: p, runsDeleted: 3, resultsDeleted: 3 });
    const tests = (
      await request(svc.url).get(`/api/projects/${p}/tests`).set('Authorization', `Bearer ${jwt}`).expect(200)
    ).body.content;
    expect(tests.map((t: { name: string }) => t.name)).toEqual(['t3']);
  });

  it('drops V2 messages that waited for their run longer than SVC_V2_PENDING_TTL, and keeps the younger ones', async () => {
    const p = (
      await request(svc.url)
        .post('/api/projects')
        .set('Authorization', `Bearer ${jwt}`)
        .send({ key: 'RETPEND', name: 'pending' })
        .expect(201)
    ).body.id as number;
    // Two runs never created: one's results sent 8 days ago (past the default 7 days), the other's just now.
    const [old, young] = ['8 days', '1 minute'];
    const rows: { id: string }[] = await svc.dataSource.query(
      `INSERT INTO pending_ingest (project_id, run_uuid, kind, payload, created_at)
       SELECT $1, gen_random_uuid(), 'results', '{}'::jsonb, now() - ago::interval FROM unnest($2::text[]) AS ago
       RETURNING id`,
      [p, [old, young]],
    );
    const left = await eventually(async () => {
      const kept: { id: string }[] = await svc.dataSource.query(
        'SELECT id FROM pending_ingest WHERE id = ANY($1::bigint[]) ORDER BY id',
        [rows.map((r) => r.id)],
      );
      return kept.length === 1 ? kept.map((r) => String(r.id)) : undefined;
    }, 30_000);
    expect(left).toEqual([String(rows[1].id)]);
  });
});
