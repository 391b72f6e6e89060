import request from 'supertest';
import { insertUser } from '../factories/user.factory.js';
import { RunningApp, TestDeployment } from './app.js';
import { eventually, login } from './http.js';

export type Status = 'PASSED' | 'FAILED' | 'BROKEN' | 'SKIPPED';

export interface Gate {
  status: 'PASSED' | 'FAILED' | 'PENDING' | 'OFF';
  evaluatedAt: string | null;
  conditions: { name: string; expected: number; actual: number | null; passed: boolean }[];
  ignored: { quarantined: number; knownIssues: number };
}

/**
 * A started service, its owner and a project of `key`, for the tests of what the quality gate leaves out
 * (gate-quarantine, gate-triage): registers the suite's beforeAll and afterAll, and answers the calls they make.
 */
export function gateProject(key: string, name: string) {
  const deployment = new TestDeployment();
  let svc: RunningApp;
  let owner: string;
  let projectId: number;

  const get = (path: string) => request(svc.url).get(path).set('Authorization', `Bearer ${owner}`);
  const send = (method: 'post' | 'put' | 'patch' | 'delete', path: string, body?: object) =>
    request(svc.url)[method](path).set('Authorization', `Bearer ${owner}`).send(body);
  const gateOf = async (runId: number): Promise<Gate> =>
    (await get(`/api/runs/${runId}/gate`).expect(200)).body;
  /** Makes a project of `key` the one the calls below use. */
  const newProject = async (projectKey: string, projectName: string) => {
    projectId = (await send('post', '/api/projects', { key: projectKey, name: projectName }).expect(201)).body
      .id;
  };

  beforeAll(async () => {
    [svc] = await deployment.start();
    const user = await insertUser(svc.dataSource);
    owner = (await login(svc.url, user.email, user.password)).accessToken;
    await newProject(key, name);
  });
  afterAll(() => deployment.stop());

  return {
    get,
    send,
    gateOf,
    newProject,
    get projectId() {
      return projectId;
    },
    /** The gate once it says `status` (a change's evaluation follows its commit). */
    gateBecomes: (runId: number, status: Gate['status']) =>
      eventually(async () => {
        const gate = await gateOf(runId);
        return gate.status === status ? gate : undefined;
      }),
    settle: (gate: object) =>
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
      }).expect(200),
    /** A finished V1 run of `stream` with these outcomes (suite S; a failure's message names its test). */
    async run(stream: string, outcomes: Record<string, Status>) {
      const created = (
        await send('post', `/api/projects/${projectId}/runs`, { name: `${stream} run`, stream }).expect(201)
      ).body as { id: number };
      const results = Object.entries(outcomes).map(([test, status]) => ({
        name: test,
        suite: 'S',
        status,
        message: status === 'FAILED' || status === 'BROKEN' ? `${test} broke: expected true` : undefined,
      }));
      await send('post', `/api/runs/${created.id}/results`, { results }).expect(201);
      await send('post', `/api/runs/${created.id}/finish`, {}).expect(200);
      return created.id;
    },
    /** The run's outcome of test `name`: its test id and, for a failure, its signature. */
    async resultOf(runId: number, test: string) {
      const results = (await get(`/api/runs/${runId}/results?size=100`).expect(200)).body.content as {
        name: string;
        testId: number;
        failure?: { signatureId: number; isNew: boolean };
      }[];
      return results.find((r) => r.name === test)!;
    },
  };
}
