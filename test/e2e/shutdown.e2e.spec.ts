import http from 'node:http';
import { TestDeployment } from '../support/app.js';
import { eventually, login } from '../support/http.js';

/** SIGTERM (a rolling deploy, `docker stop`) lets the requests in flight finish before the process goes. */
describe('Shutting down on SIGTERM', () => {
  const deployment = new TestDeployment();
  afterAll(() => deployment.stop());

  it('answers and stores a results batch that was still arriving when the signal came', async () => {
    const [inProcess] = await deployment.start(1); // only to look at the database
    const replica = await deployment.startProcessReplica();
    const { accessToken } = await login(replica.url);
    const api = async (path: string, body: object) => {
      const res = await fetch(`${replica.url}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${accessToken}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      return (await res.json()) as { id: number };
    };
    const project = await api('/api/projects', { key: 'BYE', name: 'Shutdown' });
    const run = await api(`/api/projects/${project.id}/runs`, { name: 'drained' });

    // A batch whose body is half sent: the request is in flight when SIGTERM arrives.
    const body = Buffer.from(
      JSON.stringify({
        results: Array.from({ length: 1000 }, (_, i) => ({ name: `test ${i}`, status: 'PASSED' })),
      }),
    );
    const { port } = new URL(replica.url);
    const req = http.request({
      host: '127.0.0.1',
      port,
      path: `/api/runs/${run.id}/results`,
      method: 'POST',
      headers: {
        authorization: `Bearer ${accessToken}`,
        'content-type': 'application/json',
        'content-length': body.length,
      },
    });
    const answered = new Promise<{ status?: number; text: string }>((done, fail) => {
      req.on('response', (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk.toString()));
        res.on('end', () => done({ status: res.statusCode, text }));
      });
      req.on('error', fail);
    });
    req.write(body.subarray(0, body.length / 2));
    await new Promise((r) => setTimeout(r, 500)); // the half has arrived and the request is being read

    replica.signal('SIGTERM');
    // Shutting down: new connections are refused, while the request in flight stays open.
    await eventually(async () => {
      try {
        await fetch(`${replica.url}/api/health`);
        return undefined;
      } catch {
        return true;
      }
    });
    req.end(body.subarray(body.length / 2));

    const res = await answered;
    expect(res.status).toBe(201);
    await replica.kill('SIGTERM'); // waits for the exit
    const stored: { n: number }[] = await inProcess.dataSource.query(
      'SELECT count(*)::int AS n FROM results WHERE run_id = $1',
      [run.id],
    );
    expect(stored[0].n).toBe(1000);
  });
});
