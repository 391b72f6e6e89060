import request from 'supertest';
import { insertUser } from '../factories/user.factory.js';
import { ADMIN_EMAIL, RunningApp, TestDeployment } from '../support/app.js';
import { login } from '../support/http.js';

/**
 * Revocation reaches every replica before the revoking request answers: each replica caches user rows and API
 * tokens for a second on the hot path, and a revoked credential must not work on another replica within it.
 * Two replicas on one database and one Redis; each round warms replica B's caches, revokes through replica A, and
 * at once asks replica B.
 */
describe('Revocation across replicas', () => {
  // Some 250 sign-ins from one address: above the default rate limit.
  const deployment = new TestDeployment({ SVC_LOGIN_RATE_PER_MINUTE: '100000' });
  let a: RunningApp;
  let b: RunningApp;
  let admin: string;

  const as = (svc: RunningApp, token: string) => ({
    get: (path: string) => request(svc.url).get(path).set('Authorization', `Bearer ${token}`),
    post: (path: string, body: object) =>
      request(svc.url).post(path).set('Authorization', `Bearer ${token}`).send(body),
    patch: (path: string, body: object) =>
      request(svc.url).patch(path).set('Authorization', `Bearer ${token}`).send(body),
    delete: (path: string) => request(svc.url).delete(path).set('Authorization', `Bearer ${token}`),
  });

  beforeAll(async () => {
    [a, b] = await deployment.start(2);
    admin = (await login(a.url)).accessToken;
  });
  afterAll(() => deployment.stop());

  it('a deleted API key stops working on the other replica at once, 100 times in a row', async () => {
    const user = await insertUser(a.dataSource);
    const jwt = (await login(a.url, user.email, user.password)).accessToken;
    for (let i = 0; i < 100; i++) {
      const key = (
        await as(a, jwt)
          .post('/api/users/me/api-keys', { name: `key ${i}` })
          .expect(201)
      ).body;
      await as(b, key.token).get('/api/auth/me').expect(200);
      await as(a, jwt).delete(`/api/users/me/api-keys/${key.id}`).expect(204);
      const after = await as(b, key.token).get('/api/auth/me');
      expect([i, after.status]).toEqual([i, 401]);
    }
  });

  it("a disabled user's JWT and API key stop working on the other replica at once, 100 times in a row", async () => {
    for (let i = 0; i < 100; i++) {
      const user = await insertUser(a.dataSource);
      const jwt = (await login(a.url, user.email, user.password)).accessToken;
      const key = (await as(a, jwt).post('/api/users/me/api-keys', { name: 'ci' }).expect(201)).body
        .token as string;
      await as(b, jwt).get('/api/auth/me').expect(200);
      await as(b, key).get('/api/auth/me').expect(200);
      await as(a, admin).patch(`/api/admin/users/${user.id}`, { enabled: false }).expect(200);
      const [byJwt, byKey] = await Promise.all([
        as(b, jwt).get('/api/auth/me'),
        as(b, key).get('/api/auth/me'),
      ]);
      expect([i, byJwt.status, byKey.status]).toEqual([i, 401, 401]);
    }
  });

  it("an admin's demotion takes their admin rights on the other replica at once, through a JWT and an API key", async () => {
    for (let i = 0; i < 20; i++) {
      const user = await insertUser(a.dataSource, { admin: true });
      const jwt = (await login(a.url, user.email, user.password)).accessToken;
      const key = (await as(a, jwt).post('/api/users/me/api-keys', { name: 'ops' }).expect(201)).body
        .token as string;
      await as(b, jwt).get('/api/admin/users').expect(200);
      await as(b, key).get('/api/admin/users').expect(200);
      await as(a, admin).patch(`/api/admin/users/${user.id}`, { admin: false }).expect(200);
      const [byJwt, byKey] = await Promise.all([
        as(b, jwt).get('/api/admin/users'),
        as(b, key).get('/api/admin/users'),
      ]);
      expect([i, byJwt.status, byKey.status]).toEqual([i, 403, 403]);
    }
  });

  it('keeps working for everyone else, and the admin is still the bootstrap one', async () => {
    const me = await as(b, admin).get('/api/auth/me').expect(200);
    expect(me.body.email).toBe(ADMIN_EMAIL);
  });
});
