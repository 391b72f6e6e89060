import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import { insertUser } from '../factories/user.factory.js';
import { RunningApp, TestDeployment } from '../support/app.js';
import { eventually, login } from '../support/http.js';
import { OWN_REPORTS, SHARED_REPORTS } from '../support/report-corpus.js';

/** API.md, "Attempts: a test retried within a run": a run counts its tests' outcomes, whatever the surface. */
describe('Attempts and outcomes', () => {
  const deployment = new TestDeployment();
  let svc: RunningApp;
  let token: string;
  let projectId: number;

  const api = {
    get: (path: string) => request(svc.url).get(path).set('Authorization', `Bearer ${token}`),
    post: (path: string, body: object) =>
      request(svc.url).post(path).set('Authorization', `Bearer ${token}`).send(body),
  };
  const newRun = async (name: string, extra: object = {}): Promise<number> =>
    (await api.post(`/api/projects/${projectId}/runs`, { name, ...extra }).expect(201)).body.id;
  const counts = async (runId: number) => (await api.get(`/api/runs/${runId}`).expect(200)).body.counts;
  const importJunit = (xml: string, query = '') =>
    request(svc.url)
      .post(`/api/import/junit?projectId=${projectId}${query}`)
      .set('Authorization', `Bearer ${token}`)
      .set('Content-Type', 'application/xml')
      .send(xml);

  beforeAll(async () => {
    [svc] = await deployment.start();
    const owner = await insertUser(svc.dataSource);
    token = (await login(svc.url, owner.email, owner.password)).accessToken;
    projectId = (await api.post('/api/projects', { key: 'ATT', name: 'Attempts' }).expect(201)).body.id;
  });
  afterAll(() => deployment.stop());

  it('counts a test retried within one V1 batch once, by its last attempt, and its pass on retry', async () => {
    const runId = await newRun('retries in one batch');
    await api
      .post(`/api/runs/${runId}/results`, {
        results: [
          { name: 'flaky', suite: 'S', status: 'FAILED', retry: 0 },
          { name: 'stable', suite: 'S', status: 'PASSED' },
          { name: 'flaky', suite: 'S', status: 'PASSED', retry: 1 },
          { name: 'broken twice', suite: 'S', status: 'BROKEN', retry: 0 },
          { name: 'broken twice', suite: 'S', status: 'BROKEN', retry: 1 },
        ],
      })
      .expect(201);
    expect(await counts(runId)).toEqual({
      total: 3,
      passed: 2,
      failed: 0,
      broken: 1,
      skipped: 0,
      passedOnRetry: 1,
      attempts: 5,
    });
  });

  it('moves the counts when a later attempt arrives in a later batch, and only adds an attempt for an earlier one', async () => {
    const runId = await newRun('retries in later batches');
    await api
      .post(`/api/runs/${runId}/results`, {
        results: [
          { name: 'a', status: 'FAILED', retry: 0 },
          { name: 'b', status: 'PASSED', retry: 1 },
          { name: 'c', status: 'PASSED' },
        ],
      })
      .expect(201);
    expect(await counts(runId)).toEqual({
      total: 3,
      passed: 2,
      failed: 1,
      broken: 0,
      skipped: 0,
      passedOnRetry: 0,
      attempts: 3,
    });
    // a's retry passes (the outcome moves from FAILED to PASSED); b's first attempt arrives late (its outcome stays).
    await api
      .post(`/api/runs/${runId}/results`, {
        results: [
          { name: 'a', status: 'PASSED', retry: 1 },
          { name: 'b', status: 'FAILED', retry: 0 },
          { name: 'd', status: 'SKIPPED' },
        ],
      })
      .expect(201);
    expect(await counts(runId)).toEqual({
      total: 4,
      passed: 3,
      failed: 0,
      broken: 0,
      skipped: 1,
      passedOnRetry: 2,
      attempts: 6,
    });
    // A third attempt of a, failing again: the outcome moves back.
    await api
      .post(`/api/runs/${runId}/results`, { results: [{ name: 'a', status: 'FAILED', retry: 2 }] })
      .expect(201);
    expect(await counts(runId)).toEqual({
      total: 4,
      passed: 2,
      failed: 1,
      broken: 0,
      skipped: 1,
      passedOnRetry: 1,
      attempts: 7,
    });
  });

  it('keeps outcome counts right under concurrent writers of the same tests in one run', async () => {
    const runId = await newRun('parallel retries');
    const tests = Array.from({ length: 30 }, (_, i) => `t${i}`);
    await Promise.all(
      [0, 1, 2, 3].map((retry) =>
        api
          .post(`/api/runs/${runId}/results`, {
            results: tests.map((name) => ({ name, status: retry === 3 ? 'PASSED' : 'FAILED', retry })),
          })
          .expect(201),
      ),
    );
    expect(await counts(runId)).toEqual({
      total: 30,
      passed: 30,
      failed: 0,
      broken: 0,
      skipped: 0,
      passedOnRetry: 30,
      attempts: 120,
    });
  });

  it('counts V2 attempts by outcome, also when a retry comes in another message and a message is sent twice', async () => {
    const uuid = randomUUID();
    await api.post(`/api/v2/projects/${projectId}/runs`, { uuid, name: 'v2 retries' }).expect(202);
    const first = [
      { uuid: randomUUID(), name: 'x', status: 'FAILED', retry: 0 },
      { uuid: randomUUID(), name: 'y', status: 'PASSED' },
    ];
    await api.post(`/api/v2/projects/${projectId}/runs/${uuid}/results`, { results: first }).expect(202);
    const second = [{ uuid: randomUUID(), name: 'x', status: 'PASSED', retry: 1 }];
    await api.post(`/api/v2/projects/${projectId}/runs/${uuid}/results`, { results: second }).expect(202);
    await api
      .post(`/api/v2/projects/${projectId}/runs/${uuid}/results`, { results: [...first, ...second] })
      .expect(202);
    const status = await eventually(async () => {
      const r = await api.get(`/api/v2/projects/${projectId}/runs/${uuid}`);
      return r.status === 200 && r.body.counts.attempts === 3 && r.body.counts.passedOnRetry === 1
        ? r.body
        : undefined;
    });
    expect(status.counts).toEqual({
      total: 2,
      passed: 2,
      failed: 0,
      broken: 0,
      skipped: 0,
      passedOnRetry: 1,
      attempts: 3,
    });
  });

  it('imports TestNG retried attempts as attempts of one test, and same-named JUnit cases as tests of their own', async () => {
    const testng = await request(svc.url)
      .post(`/api/import/testng?projectId=${projectId}`)
      .set('Authorization', `Bearer ${token}`)
      .set('Content-Type', 'application/xml')
      .send(
        `<?xml version="1.0"?><testng-results><suite name="s"><test name="t"><class name="C">
           <test-method name="once" status="PASS" duration-ms="1" started-at="2026-11-20T10:00:00Z"/>
           <test-method name="retried" status="FAIL" retried="true" duration-ms="1" started-at="2026-11-20T10:00:01Z"/>
           <test-method name="retried" status="PASS" duration-ms="1" started-at="2026-11-20T10:00:02Z"/>
         </class></test></suite></testng-results>`,
      )
      .expect(201);
    expect(testng.body.counts).toEqual({
      total: 2,
      passed: 2,
      failed: 0,
      broken: 0,
      skipped: 0,
      passedOnRetry: 1,
      attempts: 3,
    });
    expect(await counts(testng.body.runId)).toEqual(testng.body.counts);

    const junit = await importJunit(
      `<?xml version="1.0"?><testsuite name="s">
         <testcase classname="C" name="same"><failure message="boom"/></testcase>
         <testcase classname="C" name="same"/>
       </testsuite>`,
    ).expect(201);
    expect(junit.body.counts).toEqual({
      total: 2,
      passed: 1,
      failed: 1,
      broken: 0,
      skipped: 0,
      passedOnRetry: 0,
      attempts: 2,
    });
    // Imported again: each maps to the test case it had.
    const again = await importJunit(
      `<?xml version="1.0"?><testsuite name="s"><testcase classname="C" name="same"/><testcase classname="C" name="same"/></testsuite>`,
    ).expect(201);
    const tests = async (runId: number) =>
      ((await api.get(`/api/runs/${runId}/results`).expect(200)).body.content as { testId: number }[])
        .map((r) => r.testId)
        .sort();
    expect(await tests(again.body.runId)).toEqual(await tests(junit.body.runId));
  });

  describe('reads by outcome', () => {
    let first: number;
    let second: number;
    beforeAll(async () => {
      first = await newRun('reads #1');
      await api
        .post(`/api/runs/${first}/results`, {
          results: [
            { name: 'steady', suite: 'R', status: 'PASSED' },
            { name: 'retried', suite: 'R', status: 'FAILED', retry: 0, message: 'timeout 1', durationMs: 5 },
            { name: 'retried', suite: 'R', status: 'PASSED', retry: 1, durationMs: 7 },
            { name: 'failing', suite: 'R', status: 'FAILED', message: 'expected 1' },
          ],
        })
        .expect(201);
      await api.post(`/api/runs/${first}/finish`, {}).expect(200);
      second = await newRun('reads #2');
      await api
        .post(`/api/runs/${second}/results`, {
          results: [
            { name: 'steady', suite: 'R', status: 'PASSED' },
            { name: 'retried', suite: 'R', status: 'PASSED' },
            { name: 'failing', suite: 'R', status: 'BROKEN', retry: 0, message: 'db down' },
            { name: 'failing', suite: 'R', status: 'FAILED', retry: 1, message: 'expected 2' },
          ],
        })
        .expect(201);
      await api.post(`/api/runs/${second}/finish`, {}).expect(200);
    });

    it('marks an outcome that passed after a failed or broken attempt, and not one whose attempts all passed', async () => {
      const run = await newRun('marks #1');
      await api
        .post(`/api/runs/${run}/results`, {
          results: [
            { name: 'twice green', suite: 'M', status: 'PASSED', retry: 0 },
            { name: 'twice green', suite: 'M', status: 'PASSED', retry: 1 },
            { name: 'broke, then passed', suite: 'M', status: 'BROKEN', retry: 0 },
            { name: 'broke, then passed', suite: 'M', status: 'PASSED', retry: 1 },
            { name: 'passed, then failed', suite: 'M', status: 'PASSED', retry: 0 },
            { name: 'passed, then failed', suite: 'M', status: 'FAILED', retry: 1 },
          ],
        })
        .expect(201);
      const outcomes = (await api.get(`/api/runs/${run}/results`).expect(200)).body;
      expect(
        outcomes.content.map((r: { name: string; attempts: number; passedOnRetry: boolean }) => [
          r.name,
          r.attempts,
          r.passedOnRetry,
        ]),
      ).toEqual([
        ['twice green', 2, false],
        ['broke, then passed', 2, true],
        ['passed, then failed', 2, false],
      ]);
      expect((await api.get(`/api/runs/${run}`).expect(200)).body.counts).toMatchObject({
        total: 3,
        passed: 2,
        failed: 1,
        passedOnRetry: 1,
        attempts: 6,
      });
    });

    it('lists one result a test with its attempts, and every attempt with attempts=all', async () => {
      const outcomes = (await api.get(`/api/runs/${first}/results`).expect(200)).body;
      expect(outcomes.totalElements).toBe(3);
      expect(
        outcomes.content.map((r: { name: string; status: string; attempts: number; outcome: boolean }) => [
          r.name,
          r.status,
          r.attempts,
          r.outcome,
        ]),
      ).toEqual([
        ['steady', 'PASSED', 1, true],
        ['retried', 'PASSED', 2, true],
        ['failing', 'FAILED', 1, true],
      ]);
      const failed = (await api.get(`/api/runs/${first}/results?status=FAILED,BROKEN`).expect(200)).body;
      expect(failed.content.map((r: { name: string }) => r.name)).toEqual(['failing']);
      const sorted = (await api.get(`/api/runs/${first}/results?sort=name,asc`).expect(200)).body;
      expect(sorted.totalElements).toBe(3);

      const all = (await api.get(`/api/runs/${first}/results?attempts=all`).expect(200)).body;
      expect(all.totalElements).toBe(4);
      expect(
        all.content.map((r: { name: string; status: string; attempts: number | null; outcome: boolean }) => [
          r.name,
          r.status,
          r.attempts,
          r.outcome,
        ]),
      ).toEqual([
        ['steady', 'PASSED', 1, true],
        ['retried', 'FAILED', null, false],
        ['retried', 'PASSED', 2, true],
        ['failing', 'FAILED', 1, true],
      ]);
      const bad = await api.get(`/api/runs/${first}/results?attempts=some`).expect(400);
      expect(bad.body.message).toMatch(/attempts/);
    });

    it('groups failing outcomes only: a test that passed on retry is no failure', async () => {
      const groups = (await api.get(`/api/runs/${first}/failure-groups`).expect(200)).body;
      expect(groups.content.map((g: { example: string; count: number }) => [g.example, g.count])).toEqual([
        ['expected 1', 1],
      ]);
      const suites = (await api.get(`/api/runs/${first}/suites`).expect(200)).body;
      expect(suites.content).toEqual([{ suite: 'R', total: 3, failed: 1 }]);
    });

    it('compares outcomes: a pass on retry is flaky, a failure after a broken attempt still failing', async () => {
      const summary = (await api.get(`/api/runs/${second}/compare?base=${first}`).expect(200)).body.summary;
      expect(summary).toMatchObject({ flaky: 1, stillFailing: 1, unchanged: 1, added: 0, removed: 0 });
    });

    it("gives a test's history one item a run, with its attempts first to last", async () => {
      const results = (await api.get(`/api/runs/${first}/results?q=retried`).expect(200)).body.content;
      const history = (
        await api.get(`/api/projects/${projectId}/tests/${results[0].testId}/history`).expect(200)
      ).body;
      expect(history.totalElements).toBe(2);
      expect(history.content.map((h: { runName: string; status: string }) => [h.runName, h.status])).toEqual([
        ['reads #2', 'PASSED'],
        ['reads #1', 'PASSED'],
      ]);
      expect(history.content[1].attempts).toEqual([
        expect.objectContaining({ status: 'FAILED', retry: 0, message: 'timeout 1', durationMs: 5 }),
        expect.objectContaining({ status: 'PASSED', retry: 1, message: null, durationMs: 7 }),
      ]);
      expect(history.content[0].attempts).toEqual([expect.objectContaining({ status: 'PASSED', retry: 0 })]);
    });

    it('computes the pass rate of the trend from outcomes', async () => {
      const trend = (await api.get(`/api/projects/${projectId}/trend?runs=100`).expect(200)).body.points;
      const point = trend.find((p: { runId: number }) => p.runId === first);
      expect(point.counts).toMatchObject({ total: 3, passed: 2, failed: 1, passedOnRetry: 1, attempts: 4 });
      expect(point.passRate).toBeCloseTo(2 / 3);
    });
  });

  describe('import', () => {
    const upload = (format: string, body: string | Buffer, query = '', type = 'application/xml') =>
      request(svc.url)
        .post(`/api/import/${format}?projectId=${projectId}${query}`)
        .set('Authorization', `Bearer ${token}`)
        .set('Content-Type', type)
        .send(body);

    it('imports cucumber --retry attempts as attempts of one test', async () => {
      const file = join(
        SHARED_REPORTS,
        'cucumber',
        'cucumber-json-converter__cucumber-ruby-7.1.0__flaky-scenario.json',
      );
      const res = await upload('cucumber', readFileSync(file), '', 'application/octet-stream').expect(201);
      expect(res.body.counts).toEqual({
        total: 1,
        passed: 1,
        failed: 0,
        broken: 0,
        skipped: 0,
        passedOnRetry: 1,
        attempts: 2,
      });
      const results = (await api.get(`/api/runs/${res.body.runId}/results`).expect(200)).body.content;
      expect(results).toEqual([expect.objectContaining({ status: 'PASSED', retry: 1, attempts: 2 })]);
    });

    it("imports Surefire's flaky and rerun elements as earlier attempts of their test case, a flaky-only one passed on retry", async () => {
      const file = join(OWN_REPORTS, 'junit', 'surefire-3-rerun-and-flaky.xml');
      const res = await upload('junit', readFileSync(file)).expect(201);
      // 5 tests, 6 rerun elements: two tests passed only on retry.
      expect(res.body.counts).toEqual({
        total: 5,
        passed: 2,
        failed: 1,
        broken: 1,
        skipped: 1,
        passedOnRetry: 2,
        attempts: 11,
      });
      const results = (await api.get(`/api/runs/${res.body.runId}/results?sort=name,asc`).expect(200)).body
        .content as {
        name: string;
        status: string;
        retry: number;
        attempts: number;
        passedOnRetry: boolean;
      }[];
      expect(results.map((r) => [r.name, r.status, r.retry, r.attempts, r.passedOnRetry])).toEqual(
        expect.arrayContaining([
          ['reservesStock', 'PASSED', 1, 2, true],
          ['releasesStock', 'FAILED', 2, 3, false],
          ['connectsToWarehouse', 'BROKEN', 1, 2, false],
        ]),
      );
      const failed = (
        await api.get(`/api/runs/${res.body.runId}/results?attempts=all&status=FAILED,BROKEN`).expect(200)
      ).body.content as { name: string; retry: number; message: string }[];
      expect(failed.filter((r) => r.name === 'reservesStock')).toEqual([
        expect.objectContaining({ retry: 0, message: 'expected: <5> but was: <4>' }),
      ]);
    });

    it("keeps a repeated JUnit test case's reruns with it: two same-named cases are two tests, each with its attempts", async () => {
      const report = `<?xml version="1.0"?><testsuite name="s">
         <testcase classname="R" name="twice"><flakyFailure message="first"/></testcase>
         <testcase classname="R" name="twice"><failure message="second"/><rerunFailure message="second again"/></testcase>
       </testsuite>`;
      const res = await upload('junit', report).expect(201);
      expect(res.body.counts).toEqual({
        total: 2,
        passed: 1,
        failed: 1,
        broken: 0,
        skipped: 0,
        passedOnRetry: 1,
        attempts: 4,
      });
      const outcomes = async (runId: number) =>
        (
          (await api.get(`/api/runs/${runId}/results?attempts=all`).expect(200)).body.content as {
            testId: number;
            status: string;
            retry: number;
          }[]
        )
          .map((r) => [r.testId, r.status, r.retry])
          .sort((a, b) => Number(a[0]) - Number(b[0]) || Number(a[2]) - Number(b[2]));
      const [first, second] = [...new Set((await outcomes(res.body.runId)).map(([id]) => id))];
      expect(await outcomes(res.body.runId)).toEqual([
        [first, 'FAILED', 0],
        [first, 'PASSED', 1],
        [second, 'FAILED', 0],
        [second, 'FAILED', 1],
      ]);
      // Imported again, each attempt goes to the test case it went to.
      const again = await upload('junit', report).expect(201);
      expect(await outcomes(again.body.runId)).toEqual(await outcomes(res.body.runId));
    });

    it('imports CTRF retries as attempts: a flaky test passed on retry, and flaky by its test health', async () => {
      const file = join(SHARED_REPORTS, 'ctrf', 'ctrf__with-retries.json');
      const res = await upload('ctrf', readFileSync(file, 'utf8'), '', 'application/json').expect(201);
      expect(res.body.counts).toEqual({
        total: 2,
        passed: 2,
        failed: 0,
        broken: 0,
        skipped: 0,
        passedOnRetry: 1,
        attempts: 4,
      });
      const flaky = (
        await api.get(`/api/projects/${projectId}/tests?q=${encodeURIComponent('flaky test')}`).expect(200)
      ).body.content as { name: string; state: string }[];
      expect(flaky).toEqual([expect.objectContaining({ name: 'flaky test', state: 'FLAKY' })]);
    });

    it('imports a report holding only a suite-level error as one BROKEN test named after the suite; an empty one is 422', async () => {
      const res = await upload(
        'junit',
        '<testsuite name="com.example.DbTest"><error message="no database" type="java.sql.SQLException">trace</error></testsuite>',
      ).expect(201);
      expect(res.body.counts).toMatchObject({ total: 1, broken: 1 });
      const results = (await api.get(`/api/runs/${res.body.runId}/results`).expect(200)).body.content;
      expect(results).toEqual([
        expect.objectContaining({
          name: 'com.example.DbTest',
          suite: 'com.example.DbTest',
          status: 'BROKEN',
          message: 'no database',
        }),
      ]);
      const empty = await upload('junit', '<testsuite name="nothing"></testsuite>').expect(422);
      expect(empty.body.message).toMatch(/no test results/);
    });

    it('takes branch, commit and env as run attributes, refusing a value with control characters', async () => {
      const res = await upload(
        'junit',
        '<testsuite name="s"><testcase name="a"/></testsuite>',
        '&branch=main&commit=4f2a9c1&env=staging&attributes=%7B%22ci%22%3A%22jenkins%22%7D',
      ).expect(201);
      const run = (await api.get(`/api/runs/${res.body.runId}`).expect(200)).body;
      expect(run.attributes).toEqual({ ci: 'jenkins', branch: 'main', commit: '4f2a9c1', env: 'staging' });
      const bad = await upload(
        'junit',
        '<testsuite name="s"><testcase name="a"/></testsuite>',
        '&branch=ma%0Ain',
      ).expect(400);
      expect(bad.body.message).toMatch(/branch/);
    });

    it("gives an imported run the report's own times: its timestamps, else the sum of its durations", async () => {
      const stamped = await upload(
        'junit',
        `<testsuites>
           <testsuite name="a" timestamp="2026-11-20T10:00:00Z"><testcase name="1" time="1.5"/><testcase name="2" time="2.5"/></testsuite>
           <testsuite name="b" timestamp="2026-11-20T10:00:10Z"><testcase name="3" time="3"/></testsuite>
         </testsuites>`,
      ).expect(201);
      const run = (await api.get(`/api/runs/${stamped.body.runId}`).expect(200)).body;
      expect([run.startedAt, run.finishedAt]).toEqual([
        '2026-11-20T10:00:00.000Z',
        '2026-11-20T10:00:13.000Z',
      ]);

      const unstamped = await upload(
        'junit',
        '<testsuite name="c"><testcase name="1" time="60"/><testcase name="2" time="30"/></testsuite>',
      ).expect(201);
      const other = (await api.get(`/api/runs/${unstamped.body.runId}`).expect(200)).body;
      expect(Date.parse(other.finishedAt) - Date.parse(other.startedAt)).toBe(90_000);
    });
  });
});
