import request from 'supertest';
import { ADMIN_EMAIL, ADMIN_PASSWORD, RunningApp } from '../support/app.js';
import { eventually, login } from '../support/http.js';
import { ProxiedApp, startProxiedApp } from '../support/proxied-app.js';
import type { TcpProxy } from '../support/tcp-proxy.js';

/** The database and Redis each behind a TCP proxy that the tests cut and restore: real outages, no mocks. */
describe('When the database or the key-value store is away', () => {
  let proxied: ProxiedApp;
  let svc: RunningApp;
  let pgProxy: TcpProxy;
  let kvProxy: TcpProxy;
  let token: string;

  beforeAll(async () => {
    proxied = await startProxiedApp();
    ({ svc, pgProxy, kvProxy } = proxied);
    token = (await login(svc.url)).accessToken;
  });
  afterAll(() => proxied?.stop());

  const signIn = () =>
    request(svc.url).post('/api/auth/login').send({ username: ADMIN_EMAIL, password: ADMIN_PASSWORD });
  const projects = () => request(svc.url).get('/api/projects').auth(token, { type: 'bearer' });
  const unavailable = (part: string) => ({
    status: 503,
    error: 'Service Unavailable',
    message: `The ${part} is unavailable; retry later`,
  });

  it('answers 503 naming the key-value store, not a 500, and recovers when it is back', async () => {
    await kvProxy.cut();
    const res = await signIn();
    expect([res.status, res.body]).toEqual([503, unavailable('key-value store')]);
    const ready = await request(svc.url).get('/api/health/ready');
    expect([ready.status, ready.body.message]).toEqual([503, expect.stringMatching(/kvstore/)]);

    await kvProxy.restore();
    await eventually(async () => ((await signIn()).status === 200 ? true : undefined));
  });

  it('answers 503 naming the database, not a 500, and recovers when it is back', async () => {
    await pgProxy.cut();
    const res = await projects();
    expect([res.status, res.body]).toEqual([503, unavailable('database')]);

    await pgProxy.restore();
    await eventually(async () => ((await projects()).status === 200 ? true : undefined));
  });
});
