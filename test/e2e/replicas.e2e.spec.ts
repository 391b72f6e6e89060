import request from 'supertest';
import { AuditEventEntity } from '../../src/audit/audit-event.entity.js';
import { insertUser } from '../factories/user.factory.js';
import { RunningApp, TestDeployment } from '../support/app.js';
import { eventually, login, refreshCookieFrom } from '../support/http.js';

/** Two replicas on one database and one Redis: limits and reuse detection hold across them. */
describe('Sign-in across two replicas', () => {
  const deployment = new TestDeployment({
    SVC_LOGIN_FAILURES_PER_ACCOUNT_HOUR: '5',
    SVC_TRUSTED_PROXIES: '127.0.0.1',
  });
  let a: RunningApp;
  let b: RunningApp;

  beforeAll(async () => {
    [a, b] = await deployment.start(2);
  });
  afterAll(() => deployment.stop());

  it('counts login attempts of one client on both replicas against one limit of 60 a minute', async () => {
    let n = 0;
    const attempt = (svc: RunningApp) =>
      request(svc.url)
        .post('/api/auth/login')
        .set('X-Forwarded-For', '203.0.113.9')
        .send({ username: `nobody-${n++}@example.com`, password: 'x' });
    for (let i = 0; i < 30; i++) {
      expect((await attempt(a)).status).not.toBe(429);
      expect((await attempt(b)).status).not.toBe(429);
    }
    const limited = await attempt(b);
    expect(limited.status).toBe(429);
    expect(limited.headers['retry-after']).toBe('60');
    expect(limited.body).toEqual({ status: 429, error: 'Too Many Requests', message: expect.stringMatching(/60 seconds/) });
    expect((await attempt(a)).status).toBe(429);
    expect((await attempt(a)).status).toBe(429);

    const row = await eventually(async () => {
      const rows = await a.dataSource.getRepository(AuditEventEntity).findBy({ type: 'RATE_LIMIT_HIT' });
      const hit = rows.find((r) => r.target === 'POST /api/auth/login' && r.details.scope === 'client');
      return hit && (hit.details.count as number) >= 3 ? hit : undefined;
    });
    // Three refused requests, one audit row.
    expect(row.details.count).toBe(3);
    expect(row.ip).toBe('203.0.113.9');
  });

  it('detects reuse of a refresh token rotated on the other replica', async () => {
    const user = await insertUser(a.dataSource);
    const session = await login(a.url, user.email, user.password);
    const rotated = await request(a.url).post('/api/auth/refresh').set('Cookie', session.refreshCookie).expect(200);
    await request(b.url).post('/api/auth/refresh').set('Cookie', session.refreshCookie).expect(401);
    await request(a.url).post('/api/auth/refresh').set('Cookie', refreshCookieFrom(rotated)).expect(401);
  });

  it('limits failed sign-ins per account across replicas, even with the right password afterwards', async () => {
    const user = await insertUser(a.dataSource);
    for (let i = 0; i < 5; i++) {
      await request(i % 2 ? a.url : b.url)
        .post('/api/auth/login')
        .send({ username: user.email, password: 'wrong-password-000' })
        .expect(401);
    }
    const blocked = await request(a.url)
      .post('/api/auth/login')
      .send({ username: user.email, password: user.password })
      .expect(429);
    // The lock lasts until the hour of failures has passed, and says so.
    expect(Number(blocked.headers['retry-after'])).toBeGreaterThan(3500);
    expect(blocked.body.message).toMatch(/this account; wait (59|60) minutes/);
  });
});
