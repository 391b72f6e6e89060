import { readdirSync } from 'node:fs';
import request from 'supertest';
import { OPERATIONS } from '../../web/src/api/operations.js';
import { webDist } from '../../src/web/web-app.js';
import { RunningApp, TestDeployment } from '../support/app.js';

describe('The web UI, served by the service at /', () => {
  const deployment = new TestDeployment();
  let svc: RunningApp;

  beforeAll(async () => {
    [svc] = await deployment.start();
  });
  afterAll(() => deployment.stop());

  it('serves the app at / and at its client-side routes, never cached, under a strict Content-Security-Policy', async () => {
    for (const path of ['/', '/sign-in', '/admin/audit', '/profile/api-keys?x=1']) {
      const res = await request(svc.url).get(path).expect(200);
      expect(res.headers['content-type']).toMatch(/^text\/html/);
      expect(res.text).toContain('<div id="root"></div>');
      expect(res.headers['cache-control']).toBe('no-store');
      const csp = res.headers['content-security-policy'];
      expect(csp).toContain("script-src 'self';");
      expect(csp).toContain("style-src 'self';");
      expect(csp).not.toContain('unsafe-inline');
    }
  });

  it('caches its hashed assets for a year, and answers a missing one with 404, not the app', async () => {
    const [asset] = readdirSync(`${webDist()}/assets`).filter((f) => f.endsWith('.js'));
    const res = await request(svc.url).get(`/assets/${asset}`).expect(200);
    expect(res.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    await request(svc.url).get('/assets/index-0000.js').expect(404);
  });

  it('never shadows the API, the live updates, the API reference or the metrics', async () => {
    expect((await request(svc.url).get('/api/nothing').expect(404)).body).toEqual({
      status: 404,
      error: 'Not Found',
      message: expect.any(String),
    });
    await request(svc.url).get('/ws').expect(426);
    await request(svc.url).get('/v3/api-docs').expect(200).expect('content-type', /json/);
    await request(svc.url)
      .get('/metrics')
      .expect(200)
      .expect('content-type', /text\/plain/);
    const reference = await request(svc.url).get('/swagger-ui.html').expect(200);
    expect(reference.text).toContain('swagger');
    expect(reference.headers['content-security-policy']).toContain("'unsafe-inline'");
  });

  it("calls only operations the API has: every path and method of the app's client is in /v3/api-docs", async () => {
    const document = (await request(svc.url).get('/v3/api-docs').expect(200)).body as {
      paths: Record<string, Record<string, unknown>>;
    };
    const missing = Object.entries(OPERATIONS).filter(
      ([, [method, path]]) => !document.paths[path]?.[method.toLowerCase()],
    );
    expect(missing).toEqual([]);
  });
});
