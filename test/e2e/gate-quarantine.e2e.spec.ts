import request from 'supertest';
import { insertUser } from '../factories/user.factory.js';
import { RunningApp, TestDeployment } from '../support/app.js';
import { eventually, login } from '../support/http.js';

type Status = 'PASSED' | 'FAILED' | 'BROKEN' | 'SKIPPED';

interface Gate {
  status: 'PASSED' | 'FAILED' | 'PENDING' | 'OFF';
  evaluatedAt: string | null;
  conditions: { name: string; expected: number; actual: number | null; passed: boolean }[];
  ignored: { quarantined: number; knownIssues: number };
}

/**
 * What the quality gate leaves out (API.md, "Quality gate"): results of quarantined tests (test health, #36), and its
 * evaluation again when a quarantine changes while the run is the latest finished run of its stream.
 */
describe('Quality gate: quarantined tests', () => {
  const deployment = new TestDeployment();
  let svc: RunningApp;
  let owner: string;
  let projectId: number;

  const get = (path: string) => request(svc.url).get(path).set('Authorization', `Bearer ${owner}`);
  const send = (method: 'post' | 'put' | 'patch' | 'delete', path: string, body?: object) =>
    request(svc.url)[method](path).set('Authorization', `Bearer ${owner}`).send(body);
  const gateOf = async (runId: number): Promise<Gate> =>
    (await get(`/api/runs/${runId}/gate`).expect(200)).body;
  /** The gate once it says `status` (a change's evaluation follows its commit). */
  const gateBecomes = (runId: number, status: Gate['status']) =>
    eventually(async () => {
      const gate = await gateOf(runId);
      return gate.status === status ? gate : undefined;
    });

  const settle = (gate: object) =>
    send('patch', `/api/projects/${projectId}/settings`, {
      gate: {
        enabled: true,
        maxFailed: 0,
        minPassRate: null,
        minTotal: null,
        noNewFailures: false,
        ignoreQuarantined: true,
        ignoreKnownIssues: true,
        ...gate,
      },
    }).expect(200);

  /** A finished V1 run of `stream` with these outcomes (suite S; a failure's message names its test). */
  async function run(stream: string, outcomes: Record<string, Status>) {
    const created = (
      await send('post', `/api/projects/${projectId}/runs`, { name: `${stream} run`, stream }).expect(201)
    ).body as { id: number };
    const results = Object.entries(outcomes).map(([name, status]) => ({
      name,
      suite: 'S',
      status,
      message: status === 'FAILED' || status === 'BROKEN' ? `${name} broke: expected true` : undefined,
    }));
    await send('post', `/api/runs/${created.id}/results`, { results }).expect(201);
    await send('post', `/api/runs/${created.id}/finish`, {}).expect(200);
    return created.id;
  }

  /** The run's outcome of test `name`: its test id and, for a failure, its signature. */
  async function resultOf(runId: number, name: string) {
    const results = (await get(`/api/runs/${runId}/results?size=100`).expect(200)).body.content as {
      name: string;
      testId: number;
      failure?: { signatureId: number; isNew: boolean };
    }[];
    return results.find((r) => r.name === name)!;
  }

  beforeAll(async () => {
    [svc] = await deployment.start();
    const user = await insertUser(svc.dataSource);
    owner = (await login(svc.url, user.email, user.password)).accessToken;
    projectId = (await send('post', '/api/projects', { key: 'GATEQ', name: 'Gate ignores' }).expect(201)).body
      .id;
  });
  afterAll(() => deployment.stop());

  it("leaves a quarantined test's results out, and evaluates the stream's latest run again on (un)quarantine", async () => {
    await settle({ minPassRate: 100 });
    const older = await run('q', { a: 'PASSED', flaky: 'FAILED' });
    const latest = await run('q', { a: 'PASSED', flaky: 'FAILED' });
    expect((await gateOf(latest)).status).toBe('FAILED');
    const { testId } = await resultOf(latest, 'flaky');

    await send('put', `/api/projects/${projectId}/tests/${testId}/quarantine`, {
      reason: 'flips on CI',
    }).expect(200);
    const gate = await gateBecomes(latest, 'PASSED');
    expect(gate.conditions).toEqual([
      { name: 'maxFailed', expected: 0, actual: 0, passed: true },
      { name: 'minPassRate', expected: 100, actual: 100, passed: true },
    ]);
    expect(gate.ignored).toEqual({ quarantined: 1, knownIssues: 0 });
    // Only the latest finished run of the stream is evaluated again.
    expect(await gateOf(older)).toMatchObject({
      status: 'FAILED',
      ignored: { quarantined: 0, knownIssues: 0 },
    });
    // A new run finished while the test is quarantined: left out from the start.
    expect((await gateOf(await run('q', { a: 'PASSED', flaky: 'BROKEN' }))).ignored.quarantined).toBe(1);

    // Not left out when the project says so.
    await settle({ ignoreQuarantined: false });
    const counted = await run('q', { a: 'PASSED', flaky: 'FAILED' });
    expect(await gateOf(counted)).toMatchObject({
      status: 'FAILED',
      ignored: { quarantined: 0, knownIssues: 0 },
    });

    // Released: the stream's latest run, which passed as the test was left out, is evaluated again and fails.
    await settle({});
    const again = await run('q', { a: 'PASSED', flaky: 'FAILED' });
    expect((await gateOf(again)).status).toBe('PASSED');
    await send('delete', `/api/projects/${projectId}/tests/${testId}/quarantine`).expect(204);
    expect((await gateBecomes(again, 'FAILED')).ignored).toEqual({ quarantined: 0, knownIssues: 0 });
  });
});
