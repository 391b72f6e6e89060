import { gzipSync } from 'node:zlib';
import net from 'node:net';
import request from 'supertest';
import { insertUser } from '../factories/user.factory.js';
import { RunningApp, TestDeployment } from '../support/app.js';
import { eventually, login, createProject } from '../support/http.js';

/**
 * Issue #34, item 8: long text cut while it streams (the stored message bounded, the cut said), and imports per
 * user bounded (429 beyond SVC_IMPORT_MAX_CONCURRENT_PER_USER, the slot given back however an import ends).
 * Memory and time are shown by `npm run bench -- --only=import.long_text`, not asserted here.
 */

const JUNIT = (cases: string) => `<?xml version="1.0"?><testsuite name="s">${cases}</testsuite>`;
const TOKEN_CUT = 'A text, comment or attribute value longer than 131136 characters was cut';

describe('Import: long text and concurrent imports (issue #34, item 8)', () => {
  const deployment = new TestDeployment({ SVC_IMPORT_MAX_CONCURRENT_PER_USER: '2' });
  let svc: RunningApp;
  let token: string;
  let projectId: number;

  const post = (body: Buffer | string, type = 'application/xml', jwt = token, format = 'junit') =>
    request(svc.url)
      .post(`/api/import/${format}`)
      .query({ projectId: String(projectId) })
      .set('Authorization', `Bearer ${jwt}`)
      .set('Content-Type', type)
      .send(Buffer.from(body));
  const runCount = async () => Number((await svc.dataSource.query(`SELECT count(*) AS n FROM runs`))[0].n);

  beforeAll(async () => {
    [svc] = await deployment.start();
    token = (await login(svc.url)).accessToken;
    projectId = await createProject(svc.url, token, { key: 'LIM', name: 'Limits' });
  });
  afterAll(() => deployment.stop());

  describe('long text', () => {
    const stored = (runId: number) =>
      svc.dataSource.query<{ message: number; trace: number }[]>(
        `SELECT length(message) AS message, length(trace) AS trace FROM results WHERE run_id = $1`,
        [runId],
      );

    it('cuts a 30 MB attribute and a 30 MB text of a gzipped JUnit report while streaming, saying so', async () => {
      const big = 'boom '.repeat(6_000_000);
      const gz = gzipSync(
        JUNIT(`<testcase name="long"><failure message="${big}" type="E">${big}</failure></testcase>`),
      );
      expect(gz.length).toBeLessThan(300_000);
      const res = await post(gz, 'application/gzip').expect(201);
      // One line for the tokens cut as they streamed in (once per token, not once per 64 KiB as before), and
      // the emitter's lines for what is stored.
      expect(res.body.warnings).toEqual([
        `${TOKEN_CUT} (and 1 more like it)`,
        'Test "long": its message was cut to 65536 characters',
        'Test "long": its trace was cut to 65536 characters',
      ]);
      const [row] = await stored(res.body.runId);
      expect(Number(row.message)).toBe(65_536);
      expect(Number(row.trace)).toBe(65_536);
    });

    it('cuts a 30 MB CTRF message string while streaming, saying so', async () => {
      const report = JSON.stringify({
        results: {
          tool: { name: 'x' },
          tests: [{ name: 'long', status: 'failed', duration: 1, message: 'boom '.repeat(6_000_000) }],
        },
      });
      const res = await post(gzipSync(report), 'application/gzip', token, 'ctrf').expect(201);
      expect(res.body.warnings).toEqual(['Test "long": its message was cut to 65536 characters']);
      const [row] = await stored(res.body.runId);
      expect(Number(row.message)).toBe(65_536);
    });
  });

  describe('concurrent imports per user', () => {
    /** An upload that sends its headers and a start of its body, then waits: an import that holds a slot. */
    interface Stalled {
      finish(): Promise<string>;
      abort(): void;
    }
    const stall = (jwt = token): Stalled => {
      const { port } = new URL(svc.url);
      const head = JUNIT('<testcase name="stalled"/>').replace('</testsuite>', '');
      const tail = '</testsuite>';
      let received = '';
      const socket = net.connect(Number(port), '127.0.0.1', () => {
        socket.write(
          [
            `POST /api/import/junit?projectId=${projectId} HTTP/1.1`,
            'Host: x',
            `Authorization: Bearer ${jwt}`,
            'Content-Type: application/xml',
            `Content-Length: ${head.length + tail.length}`,
            'Connection: close',
            '',
            head,
          ].join('\r\n'),
        );
      });
      socket.on('data', (chunk: Buffer) => (received += chunk.toString()));
      socket.on('error', () => undefined);
      const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
      return {
        finish: async () => {
          socket.write(tail);
          await closed;
          return received;
        },
        abort: () => socket.destroy(),
      };
    };

    /** The user's slots taken, as the shared store has them (import:slot:<user>:<i>, one key a slot). */
    const slotsHeld = async () => {
      const me = await request(svc.url)
        .get('/api/auth/me')
        .set('Authorization', `Bearer ${token}`)
        .expect(200);
      const values = await Promise.all([0, 1].map((i) => svc.kv.get(`import:slot:${me.body.id}:${i}`)));
      return values.filter((v) => v !== null).length;
    };
    const whenHeld = (n: number) => eventually(async () => ((await slotsHeld()) === n ? true : undefined));

    it('refuses an import beyond the limit with 429, Retry-After and the house body; the slot comes back on success, error and abort', async () => {
      const stalls: Stalled[] = [];
      try {
        // Two uploads that hold their slots: the next import of the same user is refused, nothing of it stored.
        stalls.push(stall());
        await whenHeld(1);
        stalls.push(stall());
        await whenHeld(2);
        const [a, b] = stalls;
        const before = await runCount();
        const refused = await post(JUNIT('<testcase name="third"/>')).expect(429);
        expect(refused.headers['retry-after']).toBe('10');
        expect(refused.body).toEqual({
          status: 429,
          error: 'Too Many Requests',
          message:
            'You have 2 imports running, as many as SVC_IMPORT_MAX_CONCURRENT_PER_USER allows at once; wait 10 seconds and retry',
        });
        expect(await runCount()).toBe(before);

        // Per user: another REPORTER imports meanwhile.
        const other = await insertUser(svc.dataSource);
        await request(svc.url)
          .put(`/api/projects/${projectId}/members/${other.id}`)
          .set('Authorization', `Bearer ${token}`)
          .send({ role: 'REPORTER' })
          .expect(200);
        const otherJwt = (await login(svc.url, other.email, other.password)).accessToken;
        await post(JUNIT('<testcase name="other user"/>'), 'application/xml', otherJwt).expect(201);

        // The client of one upload goes away: its slot is given back.
        a.abort();
        await whenHeld(1);
        await post(JUNIT('<testcase name="after abort"/>')).expect(201);

        // One slot held by b: an import that fails and one that succeeds each give theirs back.
        for (let i = 0; i < 3; i++) {
          await post('<testsuite><testcase name="broken">').expect(400);
          expect(await slotsHeld()).toBe(1);
          await post(JUNIT(`<testcase name="ok ${i}"/>`)).expect(201);
          expect(await slotsHeld()).toBe(1);
        }
        expect(await b.finish()).toMatch(/^HTTP\/1\.1 201 /);
        expect(await slotsHeld()).toBe(0);
      } finally {
        stalls.forEach((s) => s.abort());
      }
    });
  });
});
