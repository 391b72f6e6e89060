import request from 'supertest';
import { RunningApp, TestDeployment } from '../support/app.js';
import { login, rawRequest } from '../support/http.js';

describe('API conventions', () => {
  const deployment = new TestDeployment({ SVC_CORS_ORIGINS: 'https://ui.example.com', SVC_BODY_LIMIT: '64kb' });
  let svc: RunningApp;

  beforeAll(async () => {
    [svc] = await deployment.start();
  });
  afterAll(() => deployment.stop());

  it('answers unknown routes with the error body', async () => {
    const res = await request(svc.url).get('/api/nothing-here').expect(404);
    expect(res.body).toEqual({ status: 404, error: 'Not Found', message: expect.any(String) });
  });

  it('answers malformed JSON with 400 and the error body', async () => {
    const res = await request(svc.url)
      .post('/api/auth/login')
      .set('Content-Type', 'application/json')
      .send('{"username": ')
      .expect(400);
    expect(res.body).toEqual({ status: 400, error: 'Bad Request', message: 'The request body is not valid JSON' });
  });

  it('rejects unknown fields and names each offending field', async () => {
    const res = await request(svc.url)
      .post('/api/auth/login')
      .send({ username: 'a@example.com', password: 'p', admin: true, extra: 1 })
      .expect(400);
    expect(res.body.message).toContain('admin');
    expect(res.body.message).toContain('extra');
  });

  it('answers bodies over the limit with 413', async () => {
    const res = await request(svc.url)
      .post('/api/auth/login')
      .send({ username: 'a@example.com', password: 'x'.repeat(100_000) })
      .expect(413);
    expect(res.body).toEqual({ status: 413, error: 'Payload Too Large', message: expect.any(String) });
  });

  it('sends security headers and hides the framework', async () => {
    const res = await request(svc.url).get('/api/health').expect(200);
    expect(res.body).toEqual({ status: 'up' });
    expect(res.headers['x-powered-by']).toBeUndefined();
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['content-security-policy']).toBe("default-src 'none';frame-ancestors 'none'");
    expect(res.headers['x-frame-options']).toBe('DENY');
    expect(res.headers['strict-transport-security']).toMatch(/max-age=/);
    expect(res.headers.etag).toBeUndefined();
    // Pages a browser renders get the document policy instead.
    const page = await request(svc.url).get('/swagger-ui.html').expect(200);
    expect(page.headers['content-security-policy']).toMatch(/default-src 'self'/);
    expect(page.headers['x-frame-options']).toBe('SAMEORIGIN');
  });

  it('allows CORS only for configured origins', async () => {
    const allowed = await request(svc.url)
      .options('/api/auth/login')
      .set('Origin', 'https://ui.example.com')
      .set('Access-Control-Request-Method', 'POST');
    expect(allowed.headers['access-control-allow-origin']).toBe('https://ui.example.com');
    const refused = await request(svc.url)
      .options('/api/auth/login')
      .set('Origin', 'https://evil.example')
      .set('Access-Control-Request-Method', 'POST');
    expect(refused.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('refuses two Authorization headers on one request with 400', async () => {
    const { accessToken } = await login(svc.url);
    const { status, body } = await rawRequest(svc.url, [
      'GET /api/auth/me HTTP/1.1',
      'Host: localhost',
      `Authorization: Bearer ${accessToken}`,
      'Authorization: Bearer tms_something',
      'Connection: close',
    ]);
    expect(status).toBe(400);
    expect(JSON.parse(body).message).toMatch(/[Mm]ixing/);
  });

  it('serves the OpenAPI reference and document', async () => {
    const ui = await request(svc.url).get('/swagger-ui.html').expect(200);
    expect(ui.headers['content-type']).toMatch(/text\/html/);
    await request(svc.url).get('/swagger-ui.html/swagger-ui.css').expect(200);
    const doc = await request(svc.url).get('/v3/api-docs').expect(200);
    expect(Object.keys(doc.body.paths)).toEqual(
      expect.arrayContaining(['/api/auth/login', '/api/auth/refresh', '/api/auth/logout', '/api/auth/me', '/api/admin/audit']),
    );
    expect(doc.body.components.schemas.LoginDto.properties).toHaveProperty('username');
    expect(doc.body.components.schemas.ErrorBody).toBeDefined();
  });

  it('reports readiness of each part and exposes Prometheus metrics', async () => {
    const ready = await request(svc.url).get('/api/health/ready').expect(200);
    expect(ready.body).toEqual({ status: 'up', components: { database: 'up', kvstore: 'up' } });
    const metrics = await request(svc.url).get('/metrics').expect(200);
    expect(metrics.headers['content-type']).toMatch(/text\/plain/);
    expect(metrics.text).toContain('tms_http_request_duration_seconds_bucket');
    expect(metrics.text).toContain('tms_process_cpu_user_seconds_total');
  });
});
