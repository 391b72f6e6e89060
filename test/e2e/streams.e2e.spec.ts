import request from 'supertest';
import { Streams1795720200000 } from '../../migrations/1795720200000-Streams.js';
import { defaultStream, streamBase } from '../../src/common/streams.js';
import { insertUser } from '../factories/user.factory.js';
import { RunningApp, TestDeployment } from '../support/app.js';
import { login } from '../support/http.js';

/** API.md, "Streams: which runs are comparable", and the project settings' `streams` group. */
describe('Streams', () => {
  const deployment = new TestDeployment();
  let svc: RunningApp;
  let owner: string;
  let viewer: string;
  let projectId: number;

  const as = (token: string) => ({
    get: (path: string) => request(svc.url).get(path).set('Authorization', `Bearer ${token}`),
    post: (path: string, body: object) =>
      request(svc.url).post(path).set('Authorization', `Bearer ${token}`).send(body),
    patch: (path: string, body: object) =>
      request(svc.url).patch(path).set('Authorization', `Bearer ${token}`).send(body),
  });
  const api = () => as(owner);

  /** A finished V1 run with the given results. */
  async function finishedRun(body: object, results: { name: string; status: string }[], startedAt: string) {
    const run = (
      await api()
        .post(`/api/projects/${projectId}/runs`, { ...body, startedAt })
        .expect(201)
    ).body;
    await api().post(`/api/runs/${run.id}/results`, { results }).expect(201);
    await api().post(`/api/runs/${run.id}/finish`, {}).expect(200);
    return run as { id: number; stream: string };
  }
  const importJunit = (xml: string, query: string) =>
    request(svc.url)
      .post(`/api/import/junit?projectId=${projectId}${query}`)
      .set('Authorization', `Bearer ${owner}`)
      .set('Content-Type', 'application/xml')
      .send(xml);

  beforeAll(async () => {
    [svc] = await deployment.start();
    const o = await insertUser(svc.dataSource);
    owner = (await login(svc.url, o.email, o.password)).accessToken;
    projectId = (await api().post('/api/projects', { key: 'STR', name: 'Streams' }).expect(201)).body.id;
    const v = await insertUser(svc.dataSource);
    await api().patch(`/api/projects/${projectId}`, {}).expect(200);
    await request(svc.url)
      .put(`/api/projects/${projectId}/members/${v.id}`)
      .set('Authorization', `Bearer ${owner}`)
      .send({ role: 'VIEWER' })
      .expect(200);
    viewer = (await login(svc.url, v.email, v.password)).accessToken;
  });
  afterAll(() => deployment.stop());

  it('gives a run the default stream, or the one it names, and refuses a bad one naming it', async () => {
    const nightly = (
      await api()
        .post(`/api/projects/${projectId}/runs`, {
          name: 'nightly #1221',
          attributes: { branch: 'main', env: 'staging', commit: 'a1' },
        })
        .expect(201)
    ).body;
    expect(nightly.stream).toBe('nightly · main · staging');
    const named = (
      await api().post(`/api/projects/${projectId}/runs`, { name: 'whatever', stream: 'perf' }).expect(201)
    ).body;
    expect(named.stream).toBe('perf');
    for (const stream of ['x'.repeat(201), 'two\nlines', '']) {
      const bad = await api().post(`/api/projects/${projectId}/runs`, { name: 'r', stream }).expect(400);
      expect(bad.body.message).toMatch(/^stream /);
    }
    const badImport = await importJunit(
      '<testsuite name="s"><testcase name="a"/></testsuite>',
      `&stream=${'y'.repeat(201)}`,
    ).expect(400);
    expect(badImport.body.message).toMatch(/stream/);
    expect(
      (await api().get(`/api/projects/${projectId}/runs?stream=${encodeURIComponent('x\u0001')}`)).status,
    ).toBe(400);
  });

  it('computes the same default stream in SQL (migration and trigger) as in the service', async () => {
    const names = [
      'nightly #1221',
      'build 57',
      'run-57',
      'deploy 6f1c3a9e-2b7d-4c1e-9a0b-3d2f1e4c5b6a',
      'smoke 4f2a9c1',
      'TEST-a.xml 2026-11-26T13:00:00.000Z',
      '1221',
      'release v2',
      'smoke deadbeefcafe',
      '  padded  #3 ',
    ];
    const rows: { base: string; stream: string }[] = await svc.dataSource.query(
      `SELECT stream_base(n) AS base, run_stream(n, '{"branch":"main"}'::jsonb, ARRAY['branch', 'env']) AS stream
         FROM unnest($1::text[]) WITH ORDINALITY AS u(n, i) ORDER BY i`,
      [names],
    );
    expect(rows).toEqual(
      names.map((n) => ({
        base: streamBase(n),
        stream: defaultStream(n, { branch: 'main' }, ['branch', 'env']),
      })),
    );
  });

  it("compares a run with its stream's previous finished run, not an unrelated import in between; lists and filters streams", async () => {
    const first = await finishedRun(
      { name: 'e2e #1', attributes: { branch: 'main' } },
      [
        { name: 'a', status: 'PASSED' },
        { name: 'b', status: 'PASSED' },
      ],
      '2026-11-20T01:00:00Z',
    );
    const upload = await importJunit(
      '<testsuite name="manual"><testcase name="one"/></testsuite>',
      '',
    ).expect(201);
    const second = await finishedRun(
      { name: 'e2e #2', attributes: { branch: 'main' } },
      [
        { name: 'a', status: 'FAILED' },
        { name: 'b', status: 'PASSED' },
      ],
      '2026-11-21T01:00:00Z',
    );
    expect(second.stream).toBe(first.stream);
    const comparison = (await api().get(`/api/runs/${second.id}/compare`).expect(200)).body;
    expect(comparison.base.id).toBe(first.id);
    expect(comparison.summary).toMatchObject({ newFailures: 1, unchanged: 1, added: 0, removed: 0 });

    const streams = (await as(viewer).get(`/api/projects/${projectId}/streams`).expect(200)).body;
    const names = streams.content.map((s: { stream: string }) => s.stream);
    expect(names).toContain('e2e · main');
    const e2e = streams.content.find((s: { stream: string }) => s.stream === 'e2e · main');
    expect(e2e).toMatchObject({ runs: 2, latestRun: { id: second.id, stream: 'e2e · main' } });
    const uploaded = (await api().get(`/api/runs/${upload.body.runId}`).expect(200)).body;
    expect(names).toContain(uploaded.stream);

    const runs = (
      await api()
        .get(`/api/projects/${projectId}/runs?stream=${encodeURIComponent('e2e · main')}`)
        .expect(200)
    ).body;
    expect(runs.content.map((r: { id: number }) => r.id)).toEqual([second.id, first.id]);
    const none = (await api().get(`/api/projects/${projectId}/runs?stream=nothing`).expect(200)).body;
    expect(none).toMatchObject({ content: [], totalElements: 0 });
    const trend = (
      await api()
        .get(`/api/projects/${projectId}/trend?stream=${encodeURIComponent('e2e · main')}`)
        .expect(200)
    ).body;
    expect(trend.points.map((p: { runId: number }) => p.runId)).toEqual([first.id, second.id]);
  });

  it("shows as a project's latest run the latest finished run of its default stream, not a one-off upload", async () => {
    const key = 'LAT';
    const project = (await api().post('/api/projects', { key, name: 'Latest' }).expect(201)).body.id;
    const run = async (name: string, startedAt: string) => {
      const r = (
        await api()
          .post(`/api/projects/${project}/runs`, { name, startedAt, attributes: { branch: 'main' } })
          .expect(201)
      ).body;
      await api()
        .post(`/api/runs/${r.id}/results`, { results: [{ name: 't', status: 'FAILED' }] })
        .expect(201);
      await api().post(`/api/runs/${r.id}/finish`, {}).expect(200);
      return r.id as number;
    };
    const day = (d: number) => new Date(Date.now() - d * 86_400_000).toISOString();
    await run('nightly #1', day(3));
    await run('nightly #2', day(2));
    const latestNightly = await run('nightly #3', day(1));
    const upload = await request(svc.url)
      .post(`/api/import/junit?projectId=${project}`)
      .set('Authorization', `Bearer ${owner}`)
      .set('Content-Type', 'application/xml')
      .send(
        `<testsuite name="s" timestamp="${new Date().toISOString().slice(0, 19)}Z"><testcase name="ok"/></testsuite>`,
      )
      .expect(201);
    const listed = (await api().get('/api/projects?size=100').expect(200)).body.content.find(
      (p: { id: number }) => p.id === project,
    );
    expect(listed.latestRun).toMatchObject({ id: latestNightly, stream: 'nightly · main' });
    expect(listed.latestRun.id).not.toBe(upload.body.runId);

    // The settings name another default stream: the upload's.
    const uploaded = (await api().get(`/api/runs/${upload.body.runId}`).expect(200)).body;
    await api()
      .patch(`/api/projects/${project}/settings`, { streams: { default: uploaded.stream } })
      .expect(200);
    expect((await api().get(`/api/projects/${project}`).expect(200)).body.latestRun.id).toBe(
      upload.body.runId,
    );
  });

  it('keeps project settings: every group with defaults, validated whole, MAINTAINER to change, retention OWNER, audited', async () => {
    const got = (await as(viewer).get(`/api/projects/${projectId}/settings`).expect(200)).body;
    expect(got).toEqual({
      flaky: { window: 30, minRuns: 5, flipRate: 0.2, autoQuarantine: false, releaseAfterPasses: 10 },
      gate: {
        enabled: true,
        maxFailed: 0,
        minPassRate: null,
        minTotal: null,
        noNewFailures: false,
        ignoreQuarantined: true,
        ignoreKnownIssues: true,
      },
      triage: { similarity: 0.8 },
      retention: { keepDays: null, keepRuns: null },
      streams: { attributes: ['branch', 'env'], default: null },
    });
    await as(viewer)
      .patch(`/api/projects/${projectId}/settings`, { streams: { attributes: ['env'] } })
      .expect(403);
    const bad = await api()
      .patch(`/api/projects/${projectId}/settings`, {
        streams: { attributes: 'env', colour: 1 },
        flaky: { window: 0 },
        nope: {},
      })
      .expect(400);
    expect(bad.body.message).toContain('streams.attributes');
    expect(bad.body.message).toContain('streams.colour');
    expect(bad.body.message).toContain('flaky.window');
    expect(bad.body.message).toContain('nope');
    expect((await as(viewer).get(`/api/projects/${projectId}/settings`).expect(200)).body).toEqual(got);

    const changed = (
      await api()
        .patch(`/api/projects/${projectId}/settings`, {
          streams: { attributes: ['env'] },
          gate: { maxFailed: 3 },
        })
        .expect(200)
    ).body;
    expect(changed.streams).toEqual({ attributes: ['env'], default: null });
    expect(changed.gate).toMatchObject({ enabled: true, maxFailed: 3 });
    const run = (
      await api()
        .post(`/api/projects/${projectId}/runs`, {
          name: 'nightly #9',
          attributes: { branch: 'dev', env: 'qa' },
        })
        .expect(201)
    ).body;
    expect(run.stream).toBe('nightly · qa');
    const audit: { type: string }[] = await svc.dataSource.query(
      `SELECT type FROM audit_events WHERE type = 'PROJECT_SETTINGS_CHANGED'`,
    );
    expect(audit.length).toBeGreaterThan(0);
  });

  it('gives a V2 run the default stream (the table trigger, with the project settings), or the one it names', async () => {
    const { randomUUID } = await import('node:crypto');
    const [plain, named] = [randomUUID(), randomUUID()];
    await api()
      .post(`/api/v2/projects/${projectId}/runs`, {
        uuid: plain,
        name: 'v2 nightly #7',
        attributes: { branch: 'dev', env: 'qa' },
      })
      .expect(202);
    await api()
      .post(`/api/v2/projects/${projectId}/runs`, { uuid: named, name: 'v2 nightly #8', stream: 'v2 custom' })
      .expect(202);
    const bad = await api()
      .post(`/api/v2/projects/${projectId}/runs`, { uuid: randomUUID(), name: 'x', stream: 'a\u0007b' })
      .expect(400);
    expect(bad.body.message).toMatch(/^stream /);
    const streamOf = async (uuid: string) => {
      for (let i = 0; i < 100; i++) {
        const res = await api().get(`/api/v2/projects/${projectId}/runs/${uuid}`);
        if (res.status === 200) {
          return (await api().get(`/api/runs/${res.body.id}`).expect(200)).body.stream as string;
        }
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      throw new Error(`run ${uuid} never arrived`);
    };
    // The settings (changed by the test before) name only env.
    expect(await streamOf(plain)).toBe('v2 nightly · qa');
    expect(await streamOf(named)).toBe('v2 custom');
  });

  it('gives the runs that existed before streams their default stream in the migration', async () => {
    const runner = svc.dataSource.createQueryRunner();
    await runner.startTransaction();
    try {
      const migration = new Streams1795720200000();
      await migration.down(runner);
      const [{ id }]: { id: string }[] = await runner.query(
        `INSERT INTO runs (project_id, name, attributes) VALUES ($1, 'legacy build 812', '{"branch":"release/2","env":"prod","os":"linux"}') RETURNING id`,
        [projectId],
      );
      await migration.up(runner);
      const [{ stream }]: { stream: string }[] = await runner.query('SELECT stream FROM runs WHERE id = $1', [
        id,
      ]);
      expect(stream).toBe('legacy build · release/2 · prod');
    } finally {
      await runner.rollbackTransaction();
      await runner.release();
    }
  });
});
