import { gzipSync } from 'node:zlib';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import net from 'node:net';
import { join } from 'node:path';
import request from 'supertest';
import { insertUser } from '../factories/user.factory.js';
import { RunningApp, TestDeployment } from '../support/app.js';
import { login, createProject } from '../support/http.js';
import {
  corpus,
  FORMAT_OF,
  OWN_REPORTS as OURS,
  SHARED_REPORTS as SHARED,
  importedCounts,
} from '../support/report-corpus.js';
import { zipOf } from '../support/zip.js';

const JUNIT = (cases: string) => `<?xml version="1.0"?><testsuite name="s">${cases}</testsuite>`;

describe('Import: server-side parsing of test reports', () => {
  const deployment = new TestDeployment({ SVC_IMPORT_MAX_BYTES: '2mb' });
  let svc: RunningApp;
  let token: string;
  let projectId: number;

  const post = (
    format: string,
    body: Buffer | string,
    type = 'application/xml',
    query: Record<string, string> = {},
  ) =>
    request(svc.url)
      .post(`/api/import/${format}`)
      .query({ projectId: String(projectId), ...query })
      .set('Authorization', `Bearer ${token}`)
      .set('Content-Type', type)
      // superagent serialises a Buffer sent as JSON ({"type":"Buffer",…}); text goes as it is.
      .send(type === 'application/json' ? body.toString() : Buffer.isBuffer(body) ? body : Buffer.from(body));
  const runCount = async () => Number((await svc.dataSource.query(`SELECT count(*) AS n FROM runs`))[0].n);
  const resultCount = async () =>
    Number((await svc.dataSource.query(`SELECT count(*) AS n FROM results`))[0].n);

  beforeAll(async () => {
    [svc] = await deployment.start();
    token = (await login(svc.url)).accessToken;
    projectId = await createProject(svc.url, token, { key: 'IMP', name: 'Import' });
  });
  afterAll(() => deployment.stop());

  describe('the shared corpus of real reports', () => {
    it.each(corpus(SHARED))('imports %s with its expected counts', async (file, expected, path) => {
      const format = FORMAT_OF[expected.format];
      const type = format === 'cucumber' || format === 'ctrf' ? 'application/json' : 'application/xml';
      const res = await post(format, readFileSync(path), type);
      if (expected.total === 0) {
        // Parsed whole, nothing importable (a suite-level error without a test case): 422, nothing stored.
        expect(res.status).toBe(422);
        return;
      }
      expect({ status: res.status, message: res.body.message }).toEqual({ status: 201 });
      const counts = importedCounts(`${file}`, expected);
      expect(res.body).toMatchObject({ format, counts });
      const run = await request(svc.url)
        .get(`/api/runs/${res.body.runId}`)
        .set('Authorization', `Bearer ${token}`)
        .expect(200);
      expect(run.body).toMatchObject({ status: 'FINISHED', counts });
    });
  });

  describe('our own corpus, by detection', () => {
    it.each(corpus(OURS))('imports %s with auto', async (file, expected, path) => {
      const res = await post('auto', readFileSync(path), 'application/octet-stream');
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({ format: FORMAT_OF[expected.format], counts: importedCounts(`${file}`, expected) });
    });
  });

  it('names the run after the file and the time, or runName, and keeps attributes', async () => {
    const res = await post('junit', JUNIT('<testcase name="a"/>'), 'application/xml', {})
      .set('Content-Disposition', 'attachment; filename="TEST-a.xml"')
      .expect(201);
    const run = await request(svc.url)
      .get(`/api/runs/${res.body.runId}`)
      .set('Authorization', `Bearer ${token}`)
      .expect(200);
    expect(run.body.name).toMatch(/^TEST-a\.xml \d{4}-\d\d-\d\dT/);
    const named = await post('junit', JUNIT('<testcase name="a"/>'), 'application/xml', {
      runName: 'nightly #1',
      attributes: JSON.stringify({ branch: 'main', toString: 'kept' }),
    }).expect(201);
    const got = await request(svc.url)
      .get(`/api/runs/${named.body.runId}`)
      .set('Authorization', `Bearer ${token}`)
      .expect(200);
    expect(got.body).toMatchObject({ name: 'nightly #1', attributes: { branch: 'main', toString: 'kept' } });
    await post('junit', JUNIT('<testcase name="a"/>'), 'application/xml', { attributes: '{"a":1}' }).expect(
      400,
    );
  });

  it('gives an imported test the identity, history and flakiness of one sent through V1', async () => {
    const auth = { Authorization: `Bearer ${token}` };
    const v1 = (
      await request(svc.url)
        .post(`/api/projects/${projectId}/runs`)
        .set(auth)
        .send({ name: 'v1' })
        .expect(201)
    ).body.id;
    await request(svc.url)
      .post(`/api/runs/${v1}/results`)
      .set(auth)
      .send({ results: [{ suite: 'shop.Same', name: 'identity', status: 'PASSED' }] })
      .expect(201);
    await post(
      'junit',
      JUNIT('<testcase classname="shop.Same" name="identity"><failure message="boom"/></testcase>'),
    ).expect(201);
    const tests = await request(svc.url)
      .get(`/api/projects/${projectId}/tests?q=identity`)
      .set(auth)
      .expect(200);
    expect(tests.body.content).toHaveLength(1);
    expect(tests.body.content[0]).toMatchObject({
      suite: 'shop.Same',
      name: 'identity',
      lastStatus: 'FAILED',
    });
    const history = await request(svc.url)
      .get(`/api/projects/${projectId}/tests/${tests.body.content[0].id}/history`)
      .set(auth)
      .expect(200);
    expect(history.body.content.map((r: { status: string }) => r.status)).toEqual(['FAILED', 'PASSED']);
  });

  it('sums several multipart files into one run', async () => {
    const res = await request(svc.url)
      .post('/api/import/junit')
      .query({ projectId: String(projectId) })
      .set('Authorization', `Bearer ${token}`)
      .attach(
        'file',
        Buffer.from(JUNIT('<testcase name="a"/><testcase name="b"><failure/></testcase>')),
        'TEST-one.xml',
      )
      .attach('file', gzipSync(JUNIT('<testcase name="c"><skipped/></testcase>')), 'TEST-two.xml.gz')
      .field('note', 'ignored')
      .expect(201);
    expect(res.body.counts).toEqual({ total: 3, passed: 1, failed: 1, broken: 0, skipped: 1, passedOnRetry: 0, attempts: 3 });
  });

  it('unpacks a zip with reports in folders, warning about members that are not reports of the format', async () => {
    const zip = zipOf([
      { name: 'module-a/TEST-a.xml', data: JUNIT('<testcase name="a"/>') },
      {
        name: 'module-b/reports/TEST-b.xml',
        data: JUNIT('<testcase name="b"><error/></testcase>'),
        deflate: true,
      },
      { name: 'module-b/' },
      { name: 'README.md', data: '# not a report' },
      {
        name: 'testng-results.xml',
        data: readFileSync(join(SHARED, 'testng', 'trr-parser__single-suite.xml')),
      },
    ]);
    const res = await post('junit', zip, 'application/zip');
    expect({ status: res.status, message: res.body.message }).toEqual({ status: 201 });
    expect(res.body.counts).toEqual({ total: 2, passed: 1, failed: 0, broken: 1, skipped: 0, passedOnRetry: 0, attempts: 2 });
    expect(res.body.warnings).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^README\.md: skipped/),
        expect.stringMatching(/^testng-results\.xml: skipped, it is a testng report, not junit/),
      ]),
    );
    expect(readdirSync(join(svc.config.dataDir, 'import'))).toEqual([]);
  });

  describe('bad input: a clear 4xx, nothing stored, the process unharmed', () => {
    let before: [number, number];
    beforeEach(async () => {
      before = [await runCount(), await resultCount()];
    });
    afterEach(async () => {
      expect([await runCount(), await resultCount()]).toEqual(before);
      await request(svc.url).get('/api/health').expect(200);
    });

    it('answers 400 naming line and column for XML that is not well-formed', async () => {
      const res = await post(
        'junit',
        '<?xml version="1.0"?>\n<testsuite name="s">\n  <testcase name="a">\n</testsuite>',
      ).expect(400);
      expect(res.body.message).toMatch(/line 4/);
      expect(res.body.message).toMatch(/column/);
    });

    it('answers 400 for JSON that is not well-formed', async () => {
      const res = await post(
        'ctrf',
        '{"results": {"tests": [ {"name": "a", "status": "passed"}, ',
        'application/json',
      ).expect(400);
      expect(res.body.status).toBe(400);
    });

    it('answers 400 saying which format a report of another format looks like', async () => {
      const res = await post(
        'junit',
        readFileSync(join(SHARED, 'testng', 'trr-parser__single-suite.xml')),
      ).expect(400);
      expect(res.body.message).toMatch(/looks like a testng report, not junit/);
    });

    it('answers 422 for a report that holds no test', async () => {
      const res = await post(
        'junit',
        '<?xml version="1.0"?><testsuites><testsuite name="empty" tests="0"/></testsuites>',
      ).expect(422);
      expect(res.body.message).toMatch(/no test results/);
    });

    it.each([
      [
        'file:// XXE',
        '<?xml version="1.0"?><!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]><testsuite name="&e;"><testcase name="a"/></testsuite>',
      ],
      [
        'http:// XXE',
        '<?xml version="1.0"?><!DOCTYPE x [<!ENTITY e SYSTEM "http://127.0.0.1:9/x">]><testsuite name="&e;"><testcase name="a"/></testsuite>',
      ],
      [
        'billion laughs',
        `<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">${Array.from({ length: 9 }, (_, i) => `<!ENTITY lol${i + 1} "${`&lol${i || ''};`.repeat(10)}">`).join('')}]><testsuite name="&lol9;"><testcase name="a"/></testsuite>`,
      ],
      [
        'an undeclared entity',
        '<?xml version="1.0"?><testsuite name="&nope;"><testcase name="a"/></testsuite>',
      ],
    ])('refuses %s with 400 within a second', async (_name, xml) => {
      const started = Date.now();
      const res = await post('junit', xml).expect(400);
      expect(Date.now() - started).toBeLessThan(1000);
      expect(res.body.message).not.toContain('root:');
    });

    it('refuses nesting beyond the limit without harm', async () => {
      await post(
        'junit',
        `<testsuites>${'<testsuite name="s">'.repeat(10_000)}<testcase name="a"/>${'</testsuite>'.repeat(10_000)}</testsuites>`,
      ).expect((res) => expect([400, 413]).toContain(res.status));
    });

    it.each([
      [
        'an absolute path',
        [{ name: '/etc/TEST-a.xml', data: JUNIT('<testcase name="a"/>') }],
        /absolute path/,
      ],
      [
        'a .. segment',
        [{ name: 'reports/../../TEST-a.xml', data: JUNIT('<testcase name="a"/>') }],
        /\.\. segment/,
      ],
      ['a symbolic link', [{ name: 'TEST-link.xml', data: '/etc/passwd', symlink: true }], /symbolic link/],
      [
        'more than 10,000 entries',
        Array.from({ length: 10_001 }, (_, i) => ({ name: `d/${i}/` })),
        /10001 entries; at most 10000/,
      ],
    ])('refuses a zip with %s before extracting anything', async (_name, entries, message) => {
      const res = await post('junit', zipOf(entries), 'application/zip').expect(400);
      expect(res.body.message).toMatch(message);
      expect(readdirSync(join(svc.config.dataDir, 'import'))).toEqual([]);
    });

    it('refuses a zip whose members declare more than the limit unpacked (a zip bomb) with 413', async () => {
      const bomb = zipOf([
        {
          name: 'TEST-a.xml',
          data: JUNIT('<testcase name="a"/>'),
          declaredSize: 3 * 1024 * 1024,
          deflate: true,
        },
      ]);
      const res = await post('junit', bomb, 'application/zip');
      expect(res.status).toBe(413);
      expect(res.body.message).toMatch(/SVC_IMPORT_MAX_BYTES/);
    });

    it('cuts off a .gz that inflates beyond the limit with 413', async () => {
      const big = JUNIT(
        `<testcase name="a"><system-out>${'x'.repeat(3 * 1024 * 1024)}</system-out></testcase>`,
      );
      const gz = gzipSync(big);
      expect(gz.length).toBeLessThan(100_000);
      await post('junit', gz, 'application/gzip').expect(413);
    });

    it('refuses a declared size over SVC_IMPORT_MAX_BYTES with 413 at once', async () => {
      const res = await rawPost(
        svc.url,
        token,
        projectId,
        ['Content-Type: application/xml', 'Content-Length: 3000000'],
        '<testsuite>',
      );
      expect(res).toMatch(/^HTTP\/1.1 413/);
    });

    it('answers 415 for a type it does not read, 400 for an unknown format', async () => {
      await post('junit', 'a=b', 'application/x-www-form-urlencoded').expect(415);
      expect((await post('excel', JUNIT('<testcase name="a"/>')).expect(400)).body.message).toMatch(
        /format must be one of: auto, junit/,
      );
    });

    it('answers 400 for a corrupt gzip or zip', async () => {
      await post(
        'junit',
        Buffer.concat([gzipSync(JUNIT('<testcase name="a"/>')).subarray(0, 20), Buffer.from('garbage')]),
        'application/gzip',
      ).expect(400);
      await post(
        'junit',
        Buffer.concat([Buffer.from([0x50, 0x4b, 0x03, 0x04]), Buffer.alloc(100)]),
        'application/zip',
      ).expect(400);
    });

    it('leaves no run and no temporary file when the client disconnects mid-upload', async () => {
      const zipHead = zipOf([
        { name: 'TEST-a.xml', data: JUNIT('<testcase name="a"/>'.repeat(2000)) },
      ]).subarray(0, 20_000);
      await new Promise<void>((resolve) => {
        const { port } = new URL(svc.url);
        const socket = net.connect(Number(port), '127.0.0.1', () => {
          socket.write(
            [
              `POST /api/import/junit?projectId=${projectId} HTTP/1.1`,
              'Host: x',
              `Authorization: Bearer ${token}`,
              'Content-Type: application/zip',
              'Content-Length: 60000',
              '',
              '',
            ].join('\r\n'),
          );
          socket.write(zipHead, () => setTimeout(() => (socket.destroy(), resolve()), 300));
        });
      });
      await new Promise((r) => setTimeout(r, 500));
      const spool = join(svc.config.dataDir, 'import');
      expect(existsSync(spool) ? readdirSync(spool) : []).toEqual([]);
    });
  });

  it('truncates a message longer than the stored limit with a warning', async () => {
    const res = await post(
      'junit',
      JUNIT(`<testcase name="long"><failure message="${'m'.repeat(70_000)}">trace</failure></testcase>`),
    ).expect(201);
    expect(res.body.warnings.join(' ')).toMatch(/truncat|cut/i);
    const [row] = await svc.dataSource.query(`SELECT length(message) AS n FROM results WHERE run_id = $1`, [
      res.body.runId,
    ]);
    expect(Number(row.n)).toBeLessThanOrEqual(65_536);
  });

  it('needs REPORTER: VIEWER 403, no role 404', async () => {
    const viewer = await insertUser(svc.dataSource);
    const stranger = await insertUser(svc.dataSource);
    await request(svc.url)
      .put(`/api/projects/${projectId}/members/${viewer.id}`)
      .set('Authorization', `Bearer ${token}`)
      .send({ role: 'VIEWER' })
      .expect(200);
    for (const [who, status] of [
      [viewer, 403],
      [stranger, 404],
    ] as const) {
      const jwt = (await login(svc.url, who.email, who.password)).accessToken;
      await request(svc.url)
        .post('/api/import/junit')
        .query({ projectId: String(projectId) })
        .set('Authorization', `Bearer ${jwt}`)
        .set('Content-Type', 'application/xml')
        .send(JUNIT('<testcase name="a"/>'))
        .expect(status);
    }
    await request(svc.url)
      .post('/api/import/junit')
      .set('Authorization', `Bearer ${token}`)
      .set('Content-Type', 'application/xml')
      .send(JUNIT(''))
      .expect(400);
  });
});

/** A request written by hand (declared sizes that are not sent); the answer's text. */
function rawPost(
  url: string,
  token: string,
  projectId: number,
  headers: string[],
  body: string,
): Promise<string> {
  const { port } = new URL(url);
  return new Promise((resolve, reject) => {
    let text = '';
    const socket = net.connect(Number(port), '127.0.0.1', () =>
      socket.write(
        [
          `POST /api/import/junit?projectId=${projectId} HTTP/1.1`,
          'Host: x',
          `Authorization: Bearer ${token}`,
          ...headers,
          '',
          body,
        ].join('\r\n'),
      ),
    );
    socket.on('data', (chunk: Buffer) => (text += chunk.toString()));
    socket.on('close', () => resolve(text));
    socket.on('error', reject);
    socket.setTimeout(10_000, () => socket.destroy());
  });
}
