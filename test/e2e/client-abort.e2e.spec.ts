import net from 'node:net';
import request from 'supertest';
import { RunningApp, startApp } from '../support/app.js';
import { createTestDatabase, TestDatabase } from '../support/database.js';
import { eventually, login } from '../support/http.js';
import { CapturedLogs } from '../support/logs.js';
import { endpointOf, TcpProxy } from '../support/tcp-proxy.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * An upload that stops halfway: the request line and headers (with `Expect: 100-continue`, so that the service has
 * taken the request on before any of the body is sent), then the first bytes of a body declared ten times longer.
 */
async function halfUpload(
  url: string,
  path: string,
  headers: string[],
  firstBytes: string,
): Promise<net.Socket> {
  const { hostname, port, host } = new URL(url);
  const socket = net.connect(Number(port), hostname);
  socket.on('error', () => undefined);
  await new Promise((resolve) => socket.once('connect', resolve));
  socket.write(
    [`POST ${path} HTTP/1.1`, `Host: ${host}`, 'Expect: 100-continue', 'Content-Length: 100000', ...headers]
      .join('\r\n')
      .concat('\r\n\r\n'),
  );
  await new Promise((resolve) => socket.once('data', resolve)); // 100 Continue
  socket.write(firstBytes);
  return socket;
}

describe('A client that goes away mid-request is logged as that, never as a database outage (issue 34, item 3)', () => {
  const logs = new CapturedLogs();
  let database: TestDatabase;
  /** Between the service and PostgreSQL, to show that a real outage is still logged as one. */
  let pgProxy: TcpProxy;
  let app: RunningApp;
  let token: string;
  let uploads: { name: string; path: string; headers: string[]; body: string }[];

  beforeAll(async () => {
    database = await createTestDatabase();
    pgProxy = new TcpProxy(endpointOf(database.url, 5432));
    await pgProxy.start();
    app = await startApp(
      { SVC_DB_URL: pgProxy.through(database.url), SVC_HTTP_REQUEST_TIMEOUT: '2s' },
      { logger: logs },
    );
    token = (await login(app.url)).accessToken;
    const auth = `Authorization: Bearer ${token}`;
    const projectId = (
      await request(app.url)
        .post('/api/projects')
        .set('Authorization', `Bearer ${token}`)
        .send({ key: 'ABORT', name: 'Aborts' })
        .expect(201)
    ).body.id as number;
    const runId = (
      await request(app.url)
        .post(`/api/projects/${projectId}/runs`)
        .set('Authorization', `Bearer ${token}`)
        .send({ name: 'nightly' })
        .expect(201)
    ).body.id as number;
    uploads = [
      {
        name: 'V1 results',
        path: `/api/runs/${runId}/results`,
        headers: [auth, 'Content-Type: application/json'],
        body: '{"results": [{"name": "a", "status": "PASSED"}, ',
      },
      {
        name: 'a raw import',
        path: `/api/import/junit?projectId=${projectId}`,
        headers: [auth, 'Content-Type: application/xml'],
        body: '<testsuite name="s"><testcase name="a"/>',
      },
      {
        name: 'a multipart import',
        path: `/api/import/junit?projectId=${projectId}`,
        headers: [auth, 'Content-Type: multipart/form-data; boundary=XX'],
        body: '--XX\r\nContent-Disposition: form-data; name="file"; filename="a.xml"\r\n\r\n<testsuite name="s">',
      },
    ];
  });
  afterAll(async () => {
    await pgProxy.restore().catch(() => undefined);
    await app.close();
    await pgProxy.cut();
    await database.drop();
  });
  beforeEach(() => logs.lines.splice(0));

  /** Warnings and errors of the request path (the boot's own lines are not this test's concern). */
  const alarms = () => logs.at('warn', 'error', 'fatal').filter((l) => l.context === 'HttpErrors');

  it('logs an upload the client aborts mid-body as a client abort at debug level (V1 results, raw and multipart import)', async () => {
    for (const upload of uploads) {
      logs.lines.splice(0);
      const socket = await halfUpload(app.url, upload.path, upload.headers, upload.body);
      await sleep(100); // for the first bytes to be read: the abort comes mid-body, not before it
      socket.destroy();
      const line = await eventually(async () => logs.lines.find((l) => /Client abort/.test(l.message)));
      expect({ upload: upload.name, level: line.level, message: line.message }).toEqual({
        upload: upload.name,
        level: 'debug',
        message: expect.stringContaining(`POST ${upload.path.split('?')[0]}`),
      });
      // Nothing else comes of it: the request is over once the line is written.
      expect(logs.text()).not.toMatch(/database is unavailable/);
      expect(alarms()).toEqual([]);
    }
  });

  it('logs an upload that stalls until it is answered 408 as a request timeout at info level', async () => {
    for (const upload of uploads) {
      logs.lines.splice(0);
      const socket = await halfUpload(app.url, upload.path, upload.headers, upload.body);
      let answer = '';
      socket.on('data', (chunk: Buffer) => (answer += chunk.toString()));
      await new Promise((resolve) => socket.once('close', resolve));
      expect(answer).toMatch(/^HTTP\/1\.1 408 /);
      const line = await eventually(async () =>
        logs.lines.find((l) => /did not arrive in time/.test(l.message)),
      );
      expect({ upload: upload.name, level: line.level }).toEqual({ upload: upload.name, level: 'log' });
      expect(logs.text()).not.toMatch(/database is unavailable|Client abort/);
      expect(alarms()).toEqual([]);
    }
  });

  it('still logs a database that goes away as an outage: WARN 503, the database is unavailable', async () => {
    await pgProxy.cut();
    try {
      const res = await request(app.url).get('/api/projects').set('Authorization', `Bearer ${token}`);
      expect(res.status).toBe(503);
      const line = await eventually(async () =>
        alarms().find((l) => /database is unavailable/.test(l.message)),
      );
      expect(line.level).toBe('warn');
      expect(logs.text()).not.toMatch(/Client abort|did not arrive in time/);
    } finally {
      await pgProxy.restore();
    }
  });
});
