import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { AuditEventEntity } from '../../src/audit/audit-event.entity.js';
import { QuarantineSweeper } from '../../src/stability/quarantine.sweeper.js';
import { insertUser } from '../factories/user.factory.js';
import { RunningApp, TestDeployment } from '../support/app.js';
import { eventually, login } from '../support/http.js';
import { LiveClient } from '../support/live.js';

/** API.md, "Test health: flaky tests and quarantine" and "Project settings", through V1, V2 and import. */
describe('Test health: flaky tests and quarantine', () => {
  const deployment = new TestDeployment();
  let svc: RunningApp;
  let owner: string;
  let maintainer: { id: string; jwt: string };
  let reporter: string;
  let viewer: string;
  let projectId: number;
  let otherProjectId: number;
  const clients: LiveClient[] = [];

  const api = (token: string) => ({
    get: (path: string) => request(svc.url).get(path).set('Authorization', `Bearer ${token}`),
    post: (path: string, body: object) =>
      request(svc.url).post(path).set('Authorization', `Bearer ${token}`).send(body),
    put: (path: string, body: object) =>
      request(svc.url).put(path).set('Authorization', `Bearer ${token}`).send(body),
    patch: (path: string, body: object) =>
      request(svc.url).patch(path).set('Authorization', `Bearer ${token}`).send(body),
    delete: (path: string) => request(svc.url).delete(path).set('Authorization', `Bearer ${token}`),
  });

  async function member(project: number, role: string): Promise<{ id: string; jwt: string }> {
    const user = await insertUser(svc.dataSource);
    await api(owner).put(`/api/projects/${project}/members/${user.id}`, { role }).expect(200);
    return { id: user.id, jwt: (await login(svc.url, user.email, user.password)).accessToken };
  }

  /** A V1 run of `project` with these results, finished. */
  async function v1Run(
    project: number,
    results: object[],
    attributes: Record<string, string> = {},
    name = 'ci',
  ) {
    const run = await api(reporter).post(`/api/projects/${project}/runs`, { name, attributes }).expect(201);
    await api(reporter).post(`/api/runs/${run.body.id}/results`, { results }).expect(201);
    await api(reporter).post(`/api/runs/${run.body.id}/finish`, {}).expect(200);
    return run.body.id as number;
  }

  async function testNamed(project: number, name: string) {
    const page = await api(viewer)
      .get(`/api/projects/${project}/tests?q=${encodeURIComponent(name)}`)
      .expect(200);
    const test = page.body.content.find((t: { name: string }) => t.name === name);
    expect(test).toBeDefined();
    return test;
  }

  const audits = (type: string) =>
    svc.dataSource
      .getRepository(AuditEventEntity)
      .find({ where: { type }, order: { id: 'ASC' } })
      .then((rows) => rows.map((r) => r.details));

  beforeAll(async () => {
    [svc] = await deployment.start();
    const o = await insertUser(svc.dataSource);
    owner = (await login(svc.url, o.email, o.password)).accessToken;
    projectId = (await api(owner).post('/api/projects', { key: 'HEALTH', name: 'Health' }).expect(201)).body
      .id;
    otherProjectId = (await api(owner).post('/api/projects', { key: 'HOTHER', name: 'Other' }).expect(201))
      .body.id;
    maintainer = await member(projectId, 'MAINTAINER');
    const reporterJwt = (await member(projectId, 'REPORTER')).jwt;
    await api(owner)
      .put(`/api/projects/${otherProjectId}/members/${maintainer.id}`, { role: 'MAINTAINER' })
      .expect(200);
    reporter = (await api(reporterJwt).post('/api/users/me/api-keys', { name: 'ci' }).expect(201)).body.token;
    viewer = (await member(projectId, 'VIEWER')).jwt;
  });
  afterAll(async () => {
    clients.forEach((c) => c.ws.close());
    await deployment.stop();
  });

  it('validates the flaky settings whole, naming each field, and audits a change', async () => {
    const bad = await api(maintainer.jwt)
      .patch(`/api/projects/${projectId}/settings`, {
        flaky: { window: 501, minRuns: 1, flipRate: 1.5, releaseAfterPasses: 101 },
      })
      .expect(400);
    for (const field of ['window', 'minRuns', 'flipRate', 'releaseAfterPasses']) {
      expect(bad.body.message).toContain(`flaky.${field}`);
    }
    const tooMany = await api(maintainer.jwt)
      .patch(`/api/projects/${projectId}/settings`, { flaky: { window: 10, minRuns: 11 } })
      .expect(400);
    expect(tooMany.body).toEqual({
      status: 400,
      error: 'Bad Request',
      message: expect.stringContaining('flaky.minRuns'),
    });
    const shrink = await api(maintainer.jwt)
      .patch(`/api/projects/${projectId}/settings`, { flaky: { window: 4 } })
      .expect(400);
    expect(shrink.body.message).toContain('flaky.window');
    const ok = await api(maintainer.jwt)
      .patch(`/api/projects/${projectId}/settings`, {
        flaky: { window: 500, minRuns: 500, releaseAfterPasses: 100, flipRate: 0 },
      })
      .expect(200);
    expect(ok.body.flaky).toEqual({
      window: 500,
      minRuns: 500,
      flipRate: 0,
      autoQuarantine: false,
      releaseAfterPasses: 100,
    });
    await api(maintainer.jwt)
      .patch(`/api/projects/${projectId}/settings`, {
        flaky: { window: 30, minRuns: 5, flipRate: 0.2, releaseAfterPasses: 10 },
      })
      .expect(200);
    const reporterJwt = (await member(projectId, 'REPORTER')).jwt;
    await api(reporterJwt)
      .patch(`/api/projects/${projectId}/settings`, { flaky: { window: 10 } })
      .expect(403);
    await api(maintainer.jwt)
      .patch(`/api/projects/${projectId}/settings`, { retention: { keepDays: 10 } })
      .expect(403);
    await eventually(async () => ((await audits('PROJECT_SETTINGS_CHANGED')).length >= 2 ? true : undefined));
  });

  it('makes a test FLAKY as soon as the V1 request that made it so has returned, and tells the project', async () => {
    const live = await LiveClient.subscribed(svc.url, viewer, projectId);
    clients.push(live);
    await v1Run(projectId, [{ name: 'v1 flaky', suite: 'H', status: 'PASSED' }], { commit: 'abc' });
    expect((await testNamed(projectId, 'v1 flaky')).state).toBe('HEALTHY');
    const second = await v1Run(projectId, [{ name: 'v1 flaky', suite: 'H', status: 'FAILED' }], {
      commit: 'abc',
    });
    const test = await testNamed(projectId, 'v1 flaky');
    expect(test).toEqual(
      expect.objectContaining({
        flaky: true,
        state: 'FLAKY',
        lastStatus: 'FAILED',
        flakeRate: 1,
        runs: 2,
        quarantine: null,
        firstSeenAt: expect.any(String),
        lastFailedAt: expect.any(String),
      }),
    );
    const event = await live.next((m) => m.event === 'test.flaky');
    expect(event.data).toEqual({ testId: test.id, runId: second });
    // The same test read alone, and through the state filter sorted by flake rate.
    expect((await api(viewer).get(`/api/projects/${projectId}/tests/${test.id}`).expect(200)).body).toEqual(
      test,
    );
    const flaky = await api(viewer)
      .get(`/api/projects/${projectId}/tests?state=FLAKY&sort=flakeRate,desc`)
      .expect(200);
    expect(flaky.body.content.map((t: { id: number }) => t.id)).toContain(test.id);
    expect(flaky.body.content.every((t: { state: string }) => t.state === 'FLAKY')).toBe(true);
  });

  it('writes nothing for the plain passes of a steady test, and reads its window back when it needs it', async () => {
    const row = async (testId: number) =>
      (
        await svc.dataSource.query(
          `SELECT xmin::text AS version, runs, last_run_id::int AS "lastRunId", length(win) / 15 AS entries
             FROM test_health WHERE test_id = $1`,
          [testId],
        )
      )[0] as { version: string; runs: number; lastRunId: number; entries: number };
    const pass = (name: string) => [{ name, suite: 'S', status: 'PASSED' }];
    const runs: number[] = [];
    for (let i = 1; i <= 5; i++) {
      runs.push(await v1Run(projectId, pass('steady'), { commit: `steady-${i}` }));
      const test = await testNamed(projectId, 'steady');
      if (i === 1) {
        expect(await row(test.id)).toEqual(expect.objectContaining({ runs: 1, lastRunId: runs[0] }));
        expect(test).toEqual(expect.objectContaining({ runs: 1, flakeRate: null }));
      } else if (i === 2) {
        // Its second plain pass is not written either: the API counts it, and its flake rate is 0 from then on.
        expect(await row(test.id)).toEqual(expect.objectContaining({ runs: 1, lastRunId: runs[0] }));
        expect(test).toEqual(expect.objectContaining({ runs: 2, flakeRate: 0, state: 'HEALTHY' }));
      }
    }
    const test = await testNamed(projectId, 'steady');
    // Runs 2 to 5 left the row as run 1 wrote it (no new row version); the API counts them all the same.
    const stored = await row(test.id);
    expect(stored).toEqual(expect.objectContaining({ runs: 1, lastRunId: runs[0], entries: 1 }));
    expect(test).toEqual(
      expect.objectContaining({
        runs: 5,
        flakeRate: 0,
        flaky: false,
        state: 'HEALTHY',
        lastStatus: 'PASSED',
      }),
    );
    // A failure on the commit run 5 passed on: flaky by the second rule, which needs run 5 in the window.
    const failed = await v1Run(projectId, [{ name: 'steady', suite: 'S', status: 'FAILED' }], {
      commit: 'steady-5',
    });
    expect(await testNamed(projectId, 'steady')).toEqual(
      expect.objectContaining({ runs: 6, flaky: true, state: 'FLAKY', lastStatus: 'FAILED', flakeRate: 0.2 }),
    );
    expect(await row(test.id)).toEqual(expect.objectContaining({ runs: 6, lastRunId: failed, entries: 6 }));

    // Quarantined by hand while its row lags: its passing runs count from its true last run.
    const lagging: number[] = [];
    for (let i = 1; i <= 4; i++) {
      lagging.push(await v1Run(projectId, pass('lagging'), { commit: `lagging-${i}` }));
    }
    const other = await testNamed(projectId, 'lagging');
    expect((await row(other.id)).lastRunId).toBe(lagging[0]);
    await api(maintainer.jwt)
      .put(`/api/projects/${projectId}/tests/${other.id}/quarantine`, { reason: 'Lagging' })
      .expect(200);
    expect(await row(other.id)).toEqual(
      expect.objectContaining({ runs: 4, lastRunId: lagging[3], entries: 4 }),
    );
    const [{ pass_run: passRun }] = await svc.dataSource.query(
      'SELECT q_pass_run::int AS pass_run FROM test_health WHERE test_id = $1',
      [other.id],
    );
    expect(passRun).toBe(lagging[3]);
    await api(maintainer.jwt).delete(`/api/projects/${projectId}/tests/${other.id}/quarantine`).expect(204);
  });

  it("leaves a steady failure's repeats within the hour unwritten, counts them in the API, and reads them back when it passes", async () => {
    const row = async (testId: number) =>
      (
        await svc.dataSource.query(
          `SELECT runs, last_run_id::int AS "lastRunId", length(win) / 15 AS entries, last_failed_at AS "lastFailedAt"
             FROM test_health WHERE test_id = $1`,
          [testId],
        )
      )[0] as { runs: number; lastRunId: number; entries: number; lastFailedAt: Date };
    const startOf = async (run: number) =>
      (await api(viewer).get(`/api/runs/${run}`).expect(200)).body.startedAt as string;
    const runs: number[] = [];
    for (let i = 1; i <= 5; i++) {
      runs.push(
        await v1Run(projectId, [{ name: 'failing', suite: 'S', status: 'FAILED', message: 'x' }], {
          commit: `failing-${i}`,
        }),
      );
    }
    const test = await testNamed(projectId, 'failing');
    // Runs 1 and 2 were written (the second by the read that found it failing steadily), 3 to 5 were not.
    const stored = await row(test.id);
    expect(stored).toEqual(expect.objectContaining({ runs: 2, lastRunId: runs[1], entries: 2 }));
    expect(stored.lastFailedAt.toISOString()).toBe(await startOf(runs[1]));
    // The API reads them all the same.
    expect(test).toEqual(
      expect.objectContaining({
        runs: 5,
        flakeRate: 0,
        flaky: false,
        state: 'FAILING',
        lastStatus: 'FAILED',
        lastFailedAt: await startOf(runs[4]),
      }),
    );
    expect((await api(viewer).get(`/api/projects/${projectId}/tests/${test.id}`).expect(200)).body).toEqual(
      expect.objectContaining({ runs: 5, lastFailedAt: await startOf(runs[4]) }),
    );
    // Its last status is its last outcome's, whatever the lagging row says (another replica may have written a
    // BROKEN one that this one, not writing its FAILED repeats, did not hear of).
    await svc.dataSource.query(`UPDATE test_health SET last_status = 'BROKEN' WHERE test_id = $1`, [test.id]);
    expect(await testNamed(projectId, 'failing')).toEqual(expect.objectContaining({ lastStatus: 'FAILED' }));

    // A pass on the commit run 5 failed on: flaky by the second rule, which needs run 5 in the window.
    const passed = await v1Run(projectId, [{ name: 'failing', suite: 'S', status: 'PASSED' }], {
      commit: 'failing-5',
    });
    expect(await testNamed(projectId, 'failing')).toEqual(
      expect.objectContaining({
        runs: 6,
        flaky: true,
        state: 'FLAKY',
        lastStatus: 'PASSED',
        lastFailedAt: await startOf(runs[4]),
      }),
    );
    const caught = await row(test.id);
    expect(caught).toEqual(expect.objectContaining({ runs: 6, lastRunId: passed, entries: 6 }));
    expect(caught.lastFailedAt.toISOString()).toBe(await startOf(runs[4]));
  });

  it('loses no outcome when runs write the same tests at once (a row changed since it was read is weighed again)', async () => {
    const names = Array.from({ length: 20 }, (_, i) => `concurrent ${i}`);
    const failing = names.map((name) => ({ name, suite: 'C', status: 'FAILED', message: 'boom' }));
    for (let round = 0; round < 4; round++) {
      const runs = await Promise.all(
        [0, 1, 2].map(
          async () =>
            (await api(reporter).post(`/api/projects/${projectId}/runs`, { name: 'ci' }).expect(201)).body
              .id as number,
        ),
      );
      await Promise.all(
        runs.map((run) => api(reporter).post(`/api/runs/${run}/results`, { results: failing }).expect(201)),
      );
    }
    // The API counts every run (a steady failure's repeats within the hour are not written: the row lags).
    const listed = await api(viewer).get(`/api/projects/${projectId}/tests?q=concurrent&size=50`).expect(200);
    expect(listed.body.content.map((t: { runs: number }) => t.runs)).toEqual(names.map(() => 12));
    // A pass reads them back into the window, every one.
    await v1Run(
      projectId,
      names.map((name) => ({ name, suite: 'C', status: 'PASSED' })),
    );
    const rows: { runs: number; entries: number }[] = await svc.dataSource.query(
      `SELECT h.runs, length(h.win) / 15 AS entries FROM test_health h JOIN test_cases t ON t.id = h.test_id
        WHERE t.project_id = $1 AND t.suite = 'C'`,
      [projectId],
    );
    expect(rows).toHaveLength(20);
    expect(rows.every((r) => r.runs === 13 && Number(r.entries) === 13)).toBe(true);
  });

  it('makes a test FLAKY once its V2 message is processed', async () => {
    const uuid = randomUUID();
    await api(reporter).post(`/api/v2/projects/${projectId}/runs`, { uuid, name: 'v2 run' }).expect(202);
    await api(reporter)
      .post(`/api/v2/projects/${projectId}/runs/${uuid}/results`, {
        results: [
          { uuid: randomUUID(), name: 'v2 retried', status: 'FAILED' },
          { uuid: randomUUID(), name: 'v2 retried', status: 'PASSED', retry: 1 },
        ],
      })
      .expect(202);
    await eventually(async () => {
      const r = await api(viewer).get(`/api/v2/projects/${projectId}/runs/${uuid}`);
      return r.status === 200 && r.body.counts.total === 1 ? true : undefined;
    });
    expect(await testNamed(projectId, 'v2 retried')).toEqual(
      expect.objectContaining({
        flaky: true,
        state: 'FLAKY',
        runs: 1,
        flakeRate: null,
        lastStatus: 'PASSED',
      }),
    );
  });

  it('makes a test FLAKY through an import, by its flip rate over runs of one stream', async () => {
    const junit = (status: 'pass' | 'fail') =>
      `<testsuite name="imp"><testcase classname="imp" name="imported flips">${status === 'fail' ? '<failure message="no"/>' : ''}</testcase></testsuite>`;
    for (const [i, status] of (['pass', 'fail', 'pass', 'fail'] as const).entries()) {
      await request(svc.url)
        .post(`/api/import/junit?projectId=${projectId}&runName=${encodeURIComponent(`import #${i}`)}`)
        .set('Authorization', `Bearer ${reporter}`)
        .set('Content-Type', 'application/xml')
        .send(junit(status))
        .expect(201);
      expect((await testNamed(projectId, 'imported flips')).flaky).toBe(false); // fewer runs than minRuns (5)
    }
    await request(svc.url)
      .post(`/api/import/junit?projectId=${projectId}&runName=${encodeURIComponent('import #4')}`)
      .set('Authorization', `Bearer ${reporter}`)
      .set('Content-Type', 'application/xml')
      .send(junit('pass'))
      .expect(201);
    expect(await testNamed(projectId, 'imported flips')).toEqual(
      expect.objectContaining({ flaky: true, state: 'FLAKY', runs: 5, flakeRate: 1 }),
    );
  });

  it("leaves an import's plain passes of steady tests unwritten, and writes every test its finish changes", async () => {
    /** A TestNG report of these attempts (in order: a retried one's earlier attempts first), started at `at`. */
    const testng = (at: string, methods: [name: string, status: 'PASS' | 'FAIL', retried?: boolean][]) =>
      request(svc.url)
        .post(`/api/import/testng?projectId=${projectId}&runName=ahead`)
        .set('Authorization', `Bearer ${reporter}`)
        .set('Content-Type', 'application/xml')
        .send(
          `<?xml version="1.0"?><testng-results><suite name="s"><test name="t"><class name="Ahead">${methods
            .map(
              ([name, status, retried]) =>
                `<test-method name="${name}" status="${status}"${retried ? ' retried="true"' : ''} duration-ms="1" started-at="${at}"/>`,
            )
            .join('')}</class></test></suite></testng-results>`,
        )
        .expect(201);
    const version = async (name: string) =>
      (
        await svc.dataSource.query(
          `SELECT h.xmin::text AS v FROM test_health h JOIN test_cases t ON t.id = h.test_id
            WHERE t.project_id = $1 AND t.name = $2`,
          [projectId, name],
        )
      )[0].v as string;
    for (const day of ['2026-11-20', '2026-11-21']) {
      await testng(`${day}T10:00:00Z`, [
        ['ahead steady', 'PASS'],
        ['ahead retried', 'PASS'],
      ]);
    }
    const steadyBefore = await version('ahead steady');
    // Both steady, both first met as passes. The second's last attempt fails (its earlier, passing one is the first
    // the import meets): its outcome is no plain pass, so it is written.
    await testng('2026-11-22T10:00:00Z', [
      ['ahead steady', 'PASS'],
      ['ahead retried', 'PASS', true],
      ['ahead retried', 'FAIL'],
    ]);
    expect(await version('ahead steady')).toBe(steadyBefore);
    expect(await testNamed(projectId, 'ahead steady')).toEqual(
      expect.objectContaining({ runs: 3, state: 'HEALTHY', lastStatus: 'PASSED' }),
    );
    expect(await testNamed(projectId, 'ahead retried')).toEqual(
      expect.objectContaining({ runs: 3, flaky: true, state: 'FLAKY', lastStatus: 'FAILED' }),
    );
    // A report whose tests ran before the steady test was first seen (its start comes with the report's end): its
    // pass is written, and its first seen moves back.
    await testng('2026-11-01T08:00:00Z', [['ahead steady', 'PASS']]);
    expect(await version('ahead steady')).not.toBe(steadyBefore);
    expect((await testNamed(projectId, 'ahead steady')).firstSeenAt).toBe('2026-11-01T08:00:00.000Z');
  });

  it('quarantines a flaky test automatically, releases it after passing runs, and again only after a new failure', async () => {
    const project = (await api(owner).post('/api/projects', { key: 'HAUTO', name: 'Auto' }).expect(201)).body
      .id;
    const rep = await member(project, 'REPORTER');
    const token = (await api(rep.jwt).post('/api/users/me/api-keys', { name: 'ci2' }).expect(201)).body.token;
    await api(owner)
      .patch(`/api/projects/${project}/settings`, { flaky: { autoQuarantine: true, releaseAfterPasses: 2 } })
      .expect(200);
    const live = await LiveClient.subscribed(svc.url, owner, project);
    clients.push(live);
    const run = async (status: string, commit: string) => {
      const r = await api(token)
        .post(`/api/projects/${project}/runs`, { name: 'auto', attributes: { commit } })
        .expect(201);
      await api(token)
        .post(`/api/runs/${r.body.id}/results`, { results: [{ name: 'auto', status }] })
        .expect(201);
      return r.body.id as number;
    };
    const read = async () =>
      (await api(owner).get(`/api/projects/${project}/tests?q=auto`).expect(200)).body.content[0];
    await run('PASSED', 'c1');
    const flaky = await run('FAILED', 'c1');
    let test = await read();
    expect(test.state).toBe('QUARANTINED');
    expect(test.quarantine).toEqual(
      expect.objectContaining({
        auto: true,
        byUserId: null,
        until: null,
        reason: expect.stringContaining('commit'),
      }),
    );
    expect((await live.next((m) => m.event === 'test.quarantined')).data).toEqual({
      testId: test.id,
      runId: flaky,
    });
    const listed = await api(owner).get(`/api/projects/${project}/quarantine`).expect(200);
    expect(listed.body.content).toEqual([
      {
        testId: test.id,
        suite: '',
        name: 'auto',
        since: expect.any(String),
        reason: test.quarantine.reason,
        auto: true,
        until: null,
      },
    ]);
    await run('PASSED', 'c2');
    expect((await read()).state).toBe('QUARANTINED');
    const releasing = await run('PASSED', 'c3');
    test = await read();
    expect(test.state).toBe('FLAKY'); // released; the evidence is still in its window
    expect((await live.next((m) => m.event === 'test.released')).data).toEqual({
      testId: test.id,
      runId: releasing,
    });
    await run('PASSED', 'c4');
    expect((await read()).state).toBe('FLAKY');
    await run('FAILED', 'c5');
    expect((await read()).state).toBe('QUARANTINED');
    await eventually(async () => {
      const quarantines = (await audits('TEST_QUARANTINED')).filter((d) => d.testId === test.id);
      const releases = (await audits('TEST_RELEASED')).filter((d) => d.testId === test.id);
      return quarantines.length === 2 && releases.length === 1 ? { quarantines, releases } : undefined;
    }).then(({ quarantines, releases }) => {
      expect(quarantines.every((d) => d.auto === true)).toBe(true);
      expect(releases[0]).toEqual(expect.objectContaining({ auto: true }));
    });
  });

  it('quarantines and releases by hand: MAINTAINER only, audited, with until ending it', async () => {
    await v1Run(projectId, [{ name: 'manual', suite: 'M', status: 'FAILED' }]);
    const test = await testNamed(projectId, 'manual');
    expect(test.state).toBe('FAILING');
    const path = `/api/projects/${projectId}/tests/${test.id}/quarantine`;
    await api(reporter).put(path, { reason: 'no' }).expect(403);
    await api(viewer).put(path, { reason: 'no' }).expect(403);
    const missing = await api(maintainer.jwt).put(path, {}).expect(400);
    expect(missing.body.message).toContain('reason');
    await api(maintainer.jwt).put(path, { reason: '   ' }).expect(400);
    const past = await api(maintainer.jwt)
      .put(path, { reason: 'x', until: '2020-01-01T00:00:00Z' })
      .expect(400);
    expect(past.body.message).toContain('until');
    await api(maintainer.jwt).put(path, { reason: 'x', until: 'tomorrow' }).expect(400);
    await api(maintainer.jwt).put(path, { reason: 'x', extra: 1 }).expect(400);
    // Another project's test, or an unknown one: 404.
    await api(maintainer.jwt)
      .put(`/api/projects/${otherProjectId}/tests/${test.id}/quarantine`, { reason: 'x' })
      .expect(404);
    await api(maintainer.jwt)
      .put(`/api/projects/${projectId}/tests/99999999/quarantine`, { reason: 'x' })
      .expect(404);
    await api(viewer).get(`/api/projects/${otherProjectId}/tests/${test.id}`).expect(404);

    const put = await api(maintainer.jwt).put(path, { reason: 'Shared DB' }).expect(200);
    expect(put.body).toEqual(
      expect.objectContaining({
        id: test.id,
        state: 'QUARANTINED',
        quarantine: {
          since: expect.any(String),
          reason: 'Shared DB',
          auto: false,
          byUserId: Number(maintainer.id),
          until: null,
        },
      }),
    );
    // A manual quarantine stays however many passing runs.
    for (let i = 0; i < 3; i++) {
      await v1Run(projectId, [{ name: 'manual', suite: 'M', status: 'PASSED' }]);
    }
    expect((await testNamed(projectId, 'manual')).state).toBe('QUARANTINED');
    await api(reporter).delete(path).expect(403);
    await api(maintainer.jwt).delete(path).expect(204);
    expect((await testNamed(projectId, 'manual')).quarantine).toBeNull();
    await api(maintainer.jwt).delete(path).expect(204); // nothing to release
    await eventually(async () => {
      const q = (await audits('TEST_QUARANTINED')).filter((d) => d.testId === test.id);
      const r = (await audits('TEST_RELEASED')).filter((d) => d.testId === test.id);
      return q.length === 1 && r.length === 1 ? true : undefined;
    });
    const q = (await audits('TEST_QUARANTINED')).find((d) => d.testId === test.id);
    expect(q).toEqual(expect.objectContaining({ auto: false, reason: 'Shared DB' }));

    // until: ended as soon as it passes, in every read, and durably by the sweep.
    const until = new Date(Date.now() + 1500).toISOString();
    await api(maintainer.jwt).put(path, { reason: 'for a moment', until }).expect(200);
    expect((await testNamed(projectId, 'manual')).state).toBe('QUARANTINED');
    await eventually(async () => (Date.now() > Date.parse(until) ? true : undefined));
    expect((await testNamed(projectId, 'manual')).state).toBe('HEALTHY');
    expect(
      (await api(viewer).get(`/api/projects/${projectId}/quarantine`).expect(200)).body.content.map(
        (t: { testId: number }) => t.testId,
      ),
    ).not.toContain(test.id);
    const healthy = await api(viewer)
      .get(`/api/projects/${projectId}/tests?state=HEALTHY&q=manual`)
      .expect(200);
    expect(healthy.body.content.map((t: { id: number }) => t.id)).toEqual([test.id]);
    expect(await svc.app.get(QuarantineSweeper).sweep()).toBeGreaterThanOrEqual(1);
    const [row] = await svc.dataSource.query('SELECT state, q_since FROM test_health WHERE test_id = $1', [
      test.id,
    ]);
    expect(row).toEqual({ state: 'HEALTHY', q_since: null });
    await eventually(async () =>
      (await audits('TEST_RELEASED')).some((d) => d.testId === test.id && d.why === 'until passed')
        ? true
        : undefined,
    );
  });

  it('filters by state and sorts on health fields; unknown states and sorts are 400 naming them', async () => {
    const both = await api(viewer)
      .get(`/api/projects/${projectId}/tests?state=FLAKY,FAILING&sort=lastFailedAt,desc`)
      .expect(200);
    expect(both.body.content.length).toBeGreaterThan(0);
    expect(both.body.content.every((t: { state: string }) => ['FLAKY', 'FAILING'].includes(t.state))).toBe(
      true,
    );
    const times = both.body.content.map((t: { lastFailedAt: string | null }) => t.lastFailedAt);
    expect(times).toEqual([...times].sort().reverse());
    await api(viewer).get(`/api/projects/${projectId}/tests?sort=firstSeenAt&sort=name`).expect(200);
    const badState = await api(viewer).get(`/api/projects/${projectId}/tests?state=FLAKY,WOBBLY`).expect(400);
    expect(badState.body.message).toContain("'WOBBLY'");
    const badSort = await api(viewer).get(`/api/projects/${projectId}/tests?sort=lastStatus`).expect(400);
    expect(badSort.body.message).toContain("'lastStatus'");
    const first = await api(viewer)
      .get(`/api/projects/${projectId}/tests?size=1&sort=flakeRate,desc`)
      .expect(200);
    expect(first.body.nextCursor).toBeNull();
    await api(viewer).get(`/api/projects/${projectId}/tests?sort=flakeRate&cursor=abc`).expect(400);
  });
});

/** README, "Upgrading replicas one at a time": while replicas of a release before still run. */
describe('Test health with SVC_HEALTH_QUIET_SECOND_RUN=false', () => {
  const deployment = new TestDeployment({ SVC_HEALTH_QUIET_SECOND_RUN: 'false' });
  let svc: RunningApp;

  beforeAll(async () => {
    [svc] = await deployment.start();
  });
  afterAll(() => deployment.stop());

  it("writes a test's second plain pass, so that a replica of a release before reads its row up to date, and leaves the later ones unwritten", async () => {
    const user = await insertUser(svc.dataSource);
    const jwt = (await login(svc.url, user.email, user.password)).accessToken;
    const as = (req: request.Test) => req.set('Authorization', `Bearer ${jwt}`);
    const project = (
      await as(request(svc.url).post('/api/projects')).send({ key: 'UPG', name: 'Upgrade' }).expect(201)
    ).body.id as number;
    const runs: number[] = [];
    const row = async () =>
      (
        await svc.dataSource.query(
          `SELECT h.runs, h.last_run_id::int AS "lastRunId", length(h.win) / 15 AS entries
             FROM test_health h JOIN test_cases t ON t.id = h.test_id WHERE t.project_id = $1`,
          [project],
        )
      )[0] as { runs: number; lastRunId: number; entries: number };
    for (let i = 1; i <= 3; i++) {
      const run = await as(request(svc.url).post(`/api/projects/${project}/runs`))
        .send({ name: 'ci' })
        .expect(201);
      runs.push(run.body.id);
      await as(request(svc.url).post(`/api/runs/${run.body.id}/results`))
        .send({ results: [{ name: 'steady', suite: 'S', status: 'PASSED' }] })
        .expect(201);
      await as(request(svc.url).post(`/api/runs/${run.body.id}/finish`))
        .send({})
        .expect(200);
      if (i === 2) {
        expect(await row()).toEqual({ runs: 2, lastRunId: runs[1], entries: 2 });
      }
    }
    // The third pass is quiet, as with the switch on: the row holds run 2, the API counts three runs.
    expect(await row()).toEqual({ runs: 2, lastRunId: runs[1], entries: 2 });
    const listed = await as(request(svc.url).get(`/api/projects/${project}/tests?q=steady`)).expect(200);
    expect(listed.body.content[0]).toEqual(
      expect.objectContaining({ runs: 3, flakeRate: 0, state: 'HEALTHY' }),
    );
  });
});
