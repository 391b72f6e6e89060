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

  it('says a missing field is required and a field of the wrong type what it should be, nothing more', async () => {
    const missing = await request(svc.url).post('/api/auth/login').send({ password: 'p' }).expect(400);
    expect(missing.body).toEqual({ status: 400, error: 'Bad Request', message: 'username is required' });
    const typed = await request(svc.url).post('/api/auth/login').send({ username: 5, password: 'p' }).expect(400);
    expect(typed.body.message).toBe('username must be a string');

    const { accessToken } = await login(svc.url);
    const project = await request(svc.url)
      .post('/api/projects')
      .auth(accessToken, { type: 'bearer' })
      .send({ key: 'CONV', name: 'Conventions' })
      .expect(201);
    const none = await request(svc.url)
      .post(`/api/projects/${project.body.id}/runs`)
      .auth(accessToken, { type: 'bearer' })
      .send({})
      .expect(400);
    expect(none.body.message).toBe('name is required');
    const page = await request(svc.url)
      .get(`/api/projects/${project.body.id}/runs?page=abc&size=1.5`)
      .auth(accessToken, { type: 'bearer' })
      .expect(400);
    expect(page.body.message).toBe('page must be a whole number; size must be a whole number');
    // A sort field is echoed, but not a whole URL's worth of it.
    const sort = await request(svc.url)
      .get(`/api/projects/${project.body.id}/runs?sort=${'x'.repeat(3000)},asc`)
      .auth(accessToken, { type: 'bearer' })
      .expect(400);
    expect(sort.body.message).toBe(`sort field '${'x'.repeat(40)}…' is not supported; use one of: startedAt, name, id`);
  });

  it('says so when a body does not decompress as its Content-Encoding says', async () => {
    const res = await request(svc.url)
      .post('/api/auth/login')
      .set('Content-Type', 'application/json')
      .set('Content-Encoding', 'gzip')
      .send('{"username": "a", "password": "b"}')
      .expect(400);
    expect(res.body).toEqual({
      status: 400,
      error: 'Bad Request',
      message: 'The request body is not what its Content-Encoding says: it could not be decompressed',
    });
  });

  it('refuses a body that is not JSON with 400 naming the type wanted, and reads JSON-based types', async () => {
    const wanted = 'The request body must be JSON, sent with Content-Type: application/json';
    for (const type of ['form', 'text']) {
      const res = await request(svc.url).post('/api/auth/login').type(type).send('username=a&password=b').expect(400);
      expect(res.body).toEqual({ status: 400, error: 'Bad Request', message: wanted });
    }
    // Bytes as the body: fetch sends them without a Content-Type.
    const untyped = await fetch(`${svc.url}/api/auth/login`, { method: 'POST', body: new TextEncoder().encode('{}') });
    expect([untyped.status, ((await untyped.json()) as { message: string }).message]).toEqual([400, wanted]);
    // JSON under a vendor type is read as JSON: the wrong password is what fails.
    await request(svc.url)
      .post('/api/auth/login')
      .type('application/vnd.api+json')
      .send(JSON.stringify({ username: 'nobody@example.com', password: 'wrong-password' }))
      .expect(401);
    // A POST without a body still needs no Content-Type.
    await request(svc.url).post('/api/auth/logout').set('Content-Type', 'text/plain').expect(204);
  });

  it("answers requests Node's HTTP parser refuses with the error body too", async () => {
    const big = await rawRequest(svc.url, ['GET /api/health HTTP/1.1', 'Host: localhost', `X-Big: ${'a'.repeat(20_000)}`]);
    expect(big.status).toBe(431);
    expect(JSON.parse(big.body)).toEqual({ status: 431, error: 'Request Header Fields Too Large', message: expect.stringMatching(/headers are too large/) });
    const garbled = await rawRequest(svc.url, ['GET /api/health HTTP/1.1', 'Host: localhost', 'Not a header line']);
    expect(garbled.status).toBe(400);
    expect(JSON.parse(garbled.body)).toEqual({ status: 400, error: 'Bad Request', message: 'The request is not well-formed HTTP' });
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
