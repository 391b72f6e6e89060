import { createHash, randomBytes } from 'node:crypto';
import request from 'supertest';
import { insertUser } from '../factories/user.factory.js';
import { ADMIN_EMAIL, RunningApp, TestDeployment } from '../support/app.js';
import { login, refreshCookieFrom } from '../support/http.js';
import { LiveClient } from '../support/live.js';

/**
 * Revocation reaches every replica before the revoking request answers: each replica caches user rows and API
 * tokens for a second on the hot path, and a revoked credential must not work on another replica within it.
 * Two replicas on one database and one Redis; each round warms replica B's caches, revokes through replica A, and
 * at once asks replica B.
 */
/**
 * The tests that repeat a sign-in many times: each one hashes a password (argon2) on a machine the other test files
 * share, so they get more than the default 30 s. What they check is an order of events, not a speed.
 */
const LOOP_TIMEOUT = 180_000;

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

  it(
    'a deleted API key stops working on the other replica at once, 100 times in a row',
    async () => {
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
    },
    LOOP_TIMEOUT,
  );

  it(
    "a disabled user's JWT and API key stop working on the other replica at once, 100 times in a row",
    async () => {
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
    },
    LOOP_TIMEOUT,
  );

  it(
    "an admin's demotion takes their admin rights on the other replica at once, through a JWT and an API key",
    async () => {
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
    },
    LOOP_TIMEOUT,
  );

  /** A password-reset link for the user, as the reset email carries it (stored as its digest). */
  async function resetLink(userId: string): Promise<string> {
    const token = randomBytes(32).toString('base64url');
    await a.dataSource.query(
      `INSERT INTO account_tokens (user_id, purpose, token_hash, expires_at)
       VALUES ($1, 'RESET_PASSWORD', $2, now() + interval '1 hour')`,
      [userId, createHash('sha256').update(token).digest('hex')],
    );
    return token;
  }

  /** A socket on `svc` authenticated with `token`, subscribed to a project of its user (the acknowledgement). */
  async function socketOf(svc: RunningApp, token: string): Promise<LiveClient> {
    const key = `P${randomBytes(6).toString('hex').toUpperCase()}`;
    const project = (await as(a, token).post('/api/projects', { key, name: key }).expect(201)).body
      .id as number;
    const socket = await LiveClient.subscribed(svc.url, token, project);
    sockets.push(socket);
    return socket;
  }
  const sockets: LiveClient[] = [];
  afterAll(() => sockets.forEach((socket) => socket.close()));

  it(
    "a password reset ends the user's access JWTs on the other replica at once, and their sockets; a login right after works, 10 times in a row",
    async () => {
      for (let i = 0; i < 10; i++) {
        const user = await insertUser(a.dataSource);
        const [first, second] = [
          await login(a.url, user.email, user.password),
          await login(b.url, user.email, user.password),
        ];
        await as(b, first.accessToken).get('/api/auth/me').expect(200);
        const socket = await socketOf(b, second.accessToken);
        const password = `a-new-password-${i}-${randomBytes(4).toString('hex')}`;
        // Within the second of the old sign-ins, mostly: access JWTs carry `iat` in whole seconds.
        await request(a.url)
          .post('/api/auth/reset-password')
          .send({ token: await resetLink(user.id), password })
          .expect(204);
        const refused = await Promise.all([
          as(b, first.accessToken).get('/api/auth/me'),
          as(b, first.accessToken).get('/api/projects'),
          as(b, second.accessToken).get('/api/auth/me'),
          as(a, second.accessToken).get('/api/projects'),
        ]);
        expect([i, ...refused.map((res) => res.status)]).toEqual([i, 401, 401, 401, 401]);
        expect(refused[0].body.message).toMatch(/signed out/);
        expect(await socket.closed).toEqual({ code: 4401, reason: 'The credential is no longer valid' });
        // The same second as the reset, mostly: the new session is not caught by it, on either replica.
        const fresh = await login(b.url, user.email, password);
        await as(a, fresh.accessToken).get('/api/auth/me').expect(200);
        await as(b, fresh.accessToken).get('/api/projects').expect(200);
      }
    },
    LOOP_TIMEOUT,
  );

  it('a logout ends its own session on the other replica at once, the JWT it was sent with and its socket; other sessions keep working', async () => {
    const user = await insertUser(a.dataSource);
    const ended = await login(a.url, user.email, user.password);
    const other = await login(a.url, user.email, user.password);
    // A second access token of the ending session, from its refresh cookie.
    const refreshed = await request(b.url)
      .post('/api/auth/refresh')
      .set('Cookie', ended.refreshCookie)
      .expect(200);
    const cookie = refreshCookieFrom(refreshed);
    for (const token of [ended.accessToken, refreshed.body.accessToken as string, other.accessToken]) {
      await as(b, token).get('/api/auth/me').expect(200);
    }
    const socket = await socketOf(b, ended.accessToken);
    const otherSocket = await socketOf(b, other.accessToken);

    await request(a.url)
      .post('/api/auth/logout')
      .set('Authorization', `Bearer ${ended.accessToken}`)
      .set('Cookie', cookie)
      .expect(204);
    const after = await Promise.all([
      as(b, ended.accessToken).get('/api/auth/me'),
      as(b, refreshed.body.accessToken as string).get('/api/projects'),
      as(b, other.accessToken).get('/api/auth/me'),
      as(a, other.accessToken).get('/api/projects'),
    ]);
    expect(after.map((res) => res.status)).toEqual([401, 401, 200, 200]);
    expect(after[0].body.message).toMatch(/revoked/);
    expect(await socket.closed).toMatchObject({ code: 4401 });
    expect(otherSocket.ws.readyState).toBe(otherSocket.ws.OPEN);
    await request(b.url).post('/api/auth/refresh').set('Cookie', cookie).expect(401);
  });

  it("a logout with the refresh cookie alone (the web UI's) ends that session's access tokens; with a JWT alone, that JWT", async () => {
    const user = await insertUser(a.dataSource);
    const byCookie = await login(a.url, user.email, user.password);
    const byToken = await login(a.url, user.email, user.password);
    const kept = await login(a.url, user.email, user.password);
    await as(b, byCookie.accessToken).get('/api/auth/me').expect(200);
    await as(b, byToken.accessToken).get('/api/auth/me').expect(200);
    await request(a.url).post('/api/auth/logout').set('Cookie', byCookie.refreshCookie).expect(204);
    await as(b, byCookie.accessToken).get('/api/auth/me').expect(401);
    await request(a.url)
      .post('/api/auth/logout')
      .set('Authorization', `Bearer ${byToken.accessToken}`)
      .expect(204);
    await as(b, byToken.accessToken).get('/api/auth/me').expect(401);
    await as(b, kept.accessToken).get('/api/auth/me').expect(200);
    // A logout with a token that is no longer valid is still a logout.
    await request(a.url)
      .post('/api/auth/logout')
      .set('Authorization', `Bearer ${byToken.accessToken}`)
      .expect(204);
    await request(a.url).post('/api/auth/logout').set('Authorization', 'Bearer not-a-token').expect(204);
  });

  it("a disabled account's access JWTs stay refused when it is enabled again", async () => {
    const user = await insertUser(a.dataSource);
    const before = (await login(a.url, user.email, user.password)).accessToken;
    await as(b, before).get('/api/auth/me').expect(200);
    await as(a, admin).patch(`/api/admin/users/${user.id}`, { enabled: false }).expect(200);
    await as(a, admin).patch(`/api/admin/users/${user.id}`, { enabled: true }).expect(200);
    await as(b, before).get('/api/auth/me').expect(401);
    const after = (await login(b.url, user.email, user.password)).accessToken;
    await as(a, after).get('/api/auth/me').expect(200);
  });

  it('keeps working for everyone else, and the admin is still the bootstrap one', async () => {
    const me = await as(b, admin).get('/api/auth/me').expect(200);
    expect(me.body.email).toBe(ADMIN_EMAIL);
  });
});
