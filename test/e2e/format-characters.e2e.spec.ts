import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { RunningApp, TestDeployment } from '../support/app.js';
import { eventually, login } from '../support/http.js';

/**
 * Invisible format characters (Unicode Cf: U+202E RIGHT-TO-LEFT OVERRIDE and friends) in names: "Report\u202Egnp.exe"
 * shows as "Reportexe.png". Refused with 400 naming the field in names people type; removed, with a warning where
 * there is a place for one, from names that arrive with results (V1, V2, an import).
 */
describe('Invisible format characters in names', () => {
  const deployment = new TestDeployment();
  let svc: RunningApp;
  let admin: string;
  let projectId: number;
  let groupId: number;

  const as = (token: string | undefined, method: 'post' | 'patch', path: string, body: object) => {
    const req = request(svc.url)[method](path);
    return (token ? req.set('Authorization', `Bearer ${token}`) : req).send(body);
  };

  beforeAll(async () => {
    [svc] = await deployment.start(1);
    admin = (await login(svc.url)).accessToken;
    projectId = (
      await as(admin, 'post', '/api/projects', { key: 'CF', name: 'Format characters' }).expect(201)
    ).body.id;
    groupId = (await as(admin, 'post', '/api/admin/groups', { name: 'QA' }).expect(201)).body.id;
  });
  afterAll(() => deployment.stop());

  /** Each people-typed name: where it is sent, the body with `name` as the value of the field named. */
  const TYPED: [string, 'post' | 'patch', () => string, string, (name: string) => object, boolean][] = [
    [
      'project name (create)',
      'post',
      () => '/api/projects',
      'name',
      (name) => ({ key: `K${Date.now() % 1e6}`, name }),
      true,
    ],
    [
      'project name (rename)',
      'patch',
      () => `/api/projects/${projectId}`,
      'name',
      (name) => ({ name }),
      true,
    ],
    ['group name (create)', 'post', () => '/api/admin/groups', 'name', (name) => ({ name }), true],
    [
      'group name (rename)',
      'patch',
      () => `/api/admin/groups/${groupId}`,
      'name',
      (name) => ({ name }),
      true,
    ],
    ['run name (V1)', 'post', () => `/api/projects/${projectId}/runs`, 'name', (name) => ({ name }), true],
    [
      'run name (V2)',
      'post',
      () => `/api/v2/projects/${projectId}/runs`,
      'name',
      (name) => ({ uuid: randomUUID(), name }),
      true,
    ],
    ['API key name', 'post', () => '/api/users/me/api-keys', 'name', (name) => ({ name }), true],
    [
      'full name (register)',
      'post',
      () => '/api/auth/register',
      'fullName',
      (fullName) => ({ fullName, email: `r${Date.now()}@example.com` }),
      false,
    ],
    [
      'full name (accept an invitation)',
      'post',
      () => '/api/invitations/accept',
      'fullName',
      (fullName) => ({ token: 'x'.repeat(40), fullName, password: 'a-long-enough-password-1' }),
      false,
    ],
  ];

  it.each(TYPED)(
    'refuses them in the %s with 400 naming the field',
    async (label, method, path, field, body, signedIn) => {
      const token = signedIn ? admin : undefined;
      const bad = await as(token, method, path(), body('Report\u202Egnp.exe')).expect(400);
      expect(bad.body).toEqual({
        status: 400,
        error: 'Bad Request',
        message: `${field} must not contain invisible formatting characters (it holds U+202E)`,
      });
      // The same request with a clean name gets past validation (the invitation's made-up token is what it then refuses).
      const clean = await as(token, method, path(), body(`Report gnp.exe (${label})`));
      expect(clean.body.message ?? '').not.toMatch(/invisible/);
      if (path() !== '/api/invitations/accept') {
        expect(clean.status).toBeLessThan(300);
      }
    },
  );

  it('refuses every kind of them, and takes emoji joined with U+200D', async () => {
    for (const char of [
      '\u2066',
      '\u2069',
      '\u200B',
      '\u200E',
      '\u200F',
      '\uFEFF',
      '\u061C',
      '\u00AD',
      '\u{E0041}',
    ]) {
      const res = await as(admin, 'post', '/api/admin/groups', { name: `QA${char}2` }).expect(400);
      expect(res.body.message).toMatch(
        /^name must not contain invisible formatting characters \(it holds U\+/,
      );
    }
    const emoji = await as(admin, 'post', '/api/admin/groups', { name: '👩‍💻 Developers' }).expect(201);
    expect(emoji.body.name).toBe('👩‍💻 Developers');
  });

  it("refuses them in an import's runName, which a person types, and strips them from a file's name", async () => {
    const refused = await request(svc.url)
      .post('/api/import/junit')
      .query({ projectId: String(projectId), runName: 'nightly\u202E #1' })
      .set('Authorization', `Bearer ${admin}`)
      .set('Content-Type', 'application/xml')
      .send('<testsuite name="S"><testcase name="t"/></testsuite>')
      .expect(400);
    expect(refused.body.message).toMatch(
      /^runName must not contain invisible formatting characters \(it holds U\+202E\)/,
    );
    const named = await request(svc.url)
      .post('/api/import/junit')
      .query({ projectId: String(projectId) })
      .set('Authorization', `Bearer ${admin}`)
      .attach(
        'file',
        Buffer.from('<testsuite name="S"><testcase name="t"/></testsuite>'),
        'night\u202Ely.xml',
      )
      .expect(201);
    expect(named.body.warnings).toEqual([
      "Invisible formatting characters (Unicode category Cf, such as U+202E RIGHT-TO-LEFT OVERRIDE) were removed from the run's name",
    ]);
    const run = await request(svc.url)
      .get(`/api/runs/${named.body.runId}`)
      .set('Authorization', `Bearer ${admin}`)
      .expect(200);
    expect(run.body.name).toMatch(/^nightly\.xml/);
  });

  it('strips them from the test names of an imported JUnit report, with one warning counting them', async () => {
    const report =
      '<?xml version="1.0" encoding="UTF-8"?><testsuite name="Login\u2066Suite" tests="3">' +
      '<testcase classname="Login\u202ETest" name="logs in\u202Egnp.exe"/>' +
      '<testcase classname="LoginTest" name="logs out\u200B"><failure message="no"/></testcase>' +
      '<testcase classname="LoginTest" name="plain"/></testsuite>';
    const res = await request(svc.url)
      .post('/api/import/junit')
      .query({ projectId: String(projectId), runName: 'nightly #1' })
      .set('Authorization', `Bearer ${admin}`)
      .set('Content-Type', 'application/xml')
      .send(report)
      .expect(201);
    expect(res.body.warnings).toEqual([
      'Invisible formatting characters (Unicode category Cf, such as U+202E RIGHT-TO-LEFT OVERRIDE) were removed from ' +
        'the names of 2 results (test, suite or attribute names)',
    ]);
    const results = await request(svc.url)
      .get(`/api/runs/${res.body.runId}/results`)
      .set('Authorization', `Bearer ${admin}`)
      .expect(200);
    expect(
      results.body.content.map((r: { suite: string; name: string }) => `${r.suite}: ${r.name}`).sort(),
    ).toEqual(['LoginTest: logs ingnp.exe', 'LoginTest: logs out', 'LoginTest: plain']);
    const run = await request(svc.url)
      .get(`/api/runs/${res.body.runId}`)
      .set('Authorization', `Bearer ${admin}`)
      .expect(200);
    expect(run.body.name).toBe('nightly #1');
  });

  it('strips them from result names sent to V1 and V2, which then name the same test as the clean name', async () => {
    const run = (await as(admin, 'post', `/api/projects/${projectId}/runs`, { name: 'v1' }).expect(201)).body
      .id;
    await as(admin, 'post', `/api/runs/${run}/results`, {
      results: [
        {
          name: 'pays\u202Egnp.exe',
          suite: 'Check\u2066out',
          status: 'PASSED',
          attributes: { 'own\u200Ber': 'qa' },
        },
        { name: 'paysgnp.exe', suite: 'Checkout', status: 'FAILED' },
      ],
    }).expect(201);
    // Two results of one test in a run are its attempts: both listed with attempts=all.
    const v1 = (
      await request(svc.url)
        .get(`/api/runs/${run}/results?attempts=all`)
        .set('Authorization', `Bearer ${admin}`)
        .expect(200)
    ).body.content as { name: string; suite: string; testId: number; attributes: Record<string, string> }[];
    expect(v1.map((r) => [r.suite, r.name, r.attributes])).toEqual([
      ['Checkout', 'paysgnp.exe', { owner: 'qa' }],
      ['Checkout', 'paysgnp.exe', {}],
    ]);
    expect(v1[0].testId).toBe(v1[1].testId);

    const uuid = randomUUID();
    await as(admin, 'post', `/api/v2/projects/${projectId}/runs`, { uuid, name: 'v2' }).expect(202);
    await as(admin, 'post', `/api/v2/projects/${projectId}/runs/${uuid}/results`, {
      results: [{ uuid: randomUUID(), name: 'pays\u2067gnp.exe', suite: 'Checkout', status: 'PASSED' }],
    }).expect(202);
    const v2Run = await eventually(async () => {
      const res = await request(svc.url)
        .get(`/api/v2/projects/${projectId}/runs/${uuid}`)
        .set('Authorization', `Bearer ${admin}`);
      return res.status === 200 && res.body.counts.total === 1 ? (res.body.id as number) : undefined;
    });
    const v2 = (
      await request(svc.url)
        .get(`/api/runs/${v2Run}/results`)
        .set('Authorization', `Bearer ${admin}`)
        .expect(200)
    ).body.content as { name: string; testId: number }[];
    expect(v2.map((r) => [r.name, r.testId])).toEqual([['paysgnp.exe', v1[0].testId]]);
  });
});
