import { createHmac } from 'node:crypto';
import request from 'supertest';
import { AuditEventEntity } from '../../src/audit/audit-event.entity.js';
import { UserEntity } from '../../src/users/user.entity.js';
import { insertUser } from '../factories/user.factory.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, RunningApp, TestDeployment } from '../support/app.js';
import { eventually, login, refreshCookieFrom } from '../support/http.js';

function sign(payload: object, secret: string, header: object = { alg: 'HS256', typ: 'JWT' }): string {
  const part = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const body = `${part(header)}.${part(payload)}`;
  return `${body}.${createHmac('sha256', secret).update(body).digest('base64url')}`;
}

describe('Browser sign-in (login, refresh, logout, me)', () => {
  const deployment = new TestDeployment();
  let svc: RunningApp;

  beforeAll(async () => {
    [svc] = await deployment.start();
  });
  afterAll(() => deployment.stop());

  const audit = (type: string) =>
    svc.dataSource.getRepository(AuditEventEntity).find({ where: { type }, order: { id: 'ASC' } });

  it('signs in with the email in any case and sets the refresh cookie as specified', async () => {
    const res = await request(svc.url)
      .post('/api/auth/login')
      .send({ username: ADMIN_EMAIL.toUpperCase(), password: ADMIN_PASSWORD })
      .expect(200);
    expect(res.body).toEqual({ accessToken: expect.any(String), tokenType: 'Bearer', expiresIn: 900 });
    expect(res.headers['cache-control']).toBe('no-store');
    const cookie = ([] as string[])
      .concat(res.headers['set-cookie'])
      .find((c) => c.startsWith('svc_refresh='))!;
    expect(cookie).toMatch(/; HttpOnly/);
    expect(cookie).toMatch(/; SameSite=Strict/);
    expect(cookie).toMatch(/; Path=\/api\/auth/);
    expect(cookie).toMatch(/; Max-Age=2592000/);
    const claims = JSON.parse(Buffer.from(res.body.accessToken.split('.')[1], 'base64url').toString());
    expect(claims).toEqual(
      expect.objectContaining({ sub: expect.any(String), iat: expect.any(Number), jti: expect.any(String) }),
    );
    expect(claims.exp - claims.iat).toBe(900);
    const header = JSON.parse(Buffer.from(res.body.accessToken.split('.')[0], 'base64url').toString());
    expect(header.alg).toBe('HS256');
  });

  it('answers an unknown user and a wrong password with the same 401 body', async () => {
    const unknown = await request(svc.url)
      .post('/api/auth/login')
      .send({ username: 'nobody@example.com', password: 'whatever-password' })
      .expect(401);
    const wrong = await request(svc.url)
      .post('/api/auth/login')
      .send({ username: ADMIN_EMAIL, password: 'wrong-password-123' })
      .expect(401);
    expect(unknown.body).toEqual({
      status: 401,
      error: 'Unauthorized',
      message: 'Invalid username or password',
    });
    expect(wrong.body).toEqual(unknown.body);
    expect(wrong.headers['set-cookie']).toBeUndefined();
    const failures = await eventually(async () => {
      const rows = await audit('LOGIN_FAILURE');
      return rows.length >= 2 ? rows : undefined;
    });
    expect(failures.map((f) => f.details.reason)).toEqual(
      expect.arrayContaining(['unknown user', 'wrong password']),
    );
  });

  it('refuses a disabled account with the generic message', async () => {
    const user = await insertUser(svc.dataSource, { enabled: false });
    const res = await request(svc.url)
      .post('/api/auth/login')
      .send({ username: user.email, password: user.password })
      .expect(401);
    expect(res.body.message).toBe('Invalid username or password');
  });

  it('validates the login body', async () => {
    const res = await request(svc.url).post('/api/auth/login').send({ username: 5 }).expect(400);
    expect(res.body.status).toBe(400);
    expect(res.body.message).toContain('username');
    expect(res.body.message).toContain('password');
    // A NUL can name no account (nor reach the database, which refuses it in text): a 400 naming the field.
    const nul = await request(svc.url)
      .post('/api/auth/login')
      .send({ username: 'a\u0000@example.com', password: 'x' })
      .expect(400);
    expect(nul.body).toEqual({
      status: 400,
      error: 'Bad Request',
      message: expect.stringMatching(/^username must not contain NUL/),
    });
  });

  it('returns the current user for an access token', async () => {
    const { accessToken } = await login(svc.url);
    const res = await request(svc.url)
      .get('/api/auth/me')
      .set('Authorization', `Bearer ${accessToken}`)
      .expect(200);
    expect(res.body).toEqual({
      id: expect.any(Number),
      email: ADMIN_EMAIL,
      fullName: 'Administrator',
      admin: true,
      authSource: 'LOCAL',
      twoFactorEnabled: false,
      emailVerified: true,
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    });
  });

  it('refuses expired, forged, unsigned and non-access tokens', async () => {
    const secret = svc.config.auth.jwtSecret;
    const now = Math.floor(Date.now() / 1000);
    const me = (token: string) =>
      request(svc.url).get('/api/auth/me').set('Authorization', `Bearer ${token}`);

    const expired = await me(
      sign({ sub: '1', typ: 'access', jti: 'x', iat: now - 1000, exp: now - 10 }, secret),
    ).expect(401);
    expect(expired.body.message).toMatch(/expired/);
    await me(
      sign(
        { sub: '1', typ: 'access', jti: 'x', iat: now, exp: now + 60 },
        'another-secret-of-32-bytes-or-more!!',
      ),
    ).expect(401);
    await me(
      sign({ sub: '1', typ: 'access', jti: 'x', iat: now, exp: now + 60 }, secret, {
        alg: 'none',
        typ: 'JWT',
      }),
    ).expect(401);
    await me(sign({ sub: '1', typ: 'challenge', jti: 'x', iat: now, exp: now + 60 }, secret)).expect(401);
    await me('not-a-jwt').expect(401);
    const valid = sign({ sub: '1', typ: 'access', jti: 'x', iat: now, exp: now + 60 }, secret);
    await me(valid).expect(200);
    await request(svc.url).get('/api/auth/me').set('Authorization', `Basic ${valid}`).expect(401);
  });

  it('rotates the refresh cookie and hands out a fresh access token', async () => {
    const session = await login(svc.url);
    const res = await request(svc.url)
      .post('/api/auth/refresh')
      .set('Cookie', session.refreshCookie)
      .expect(200);
    expect(res.body).toEqual({ accessToken: expect.any(String), tokenType: 'Bearer', expiresIn: 900 });
    expect(res.headers['cache-control']).toBe('no-store');
    const rotated = refreshCookieFrom(res);
    expect(rotated).not.toBe(session.refreshCookie);
    await request(svc.url)
      .get('/api/auth/me')
      .set('Authorization', `Bearer ${res.body.accessToken}`)
      .expect(200);
    await request(svc.url).post('/api/auth/refresh').set('Cookie', rotated).expect(200);
  });

  it('revokes the whole family when a superseded refresh token comes back', async () => {
    const session = await login(svc.url);
    const first = await request(svc.url)
      .post('/api/auth/refresh')
      .set('Cookie', session.refreshCookie)
      .expect(200);
    const current = refreshCookieFrom(first);

    const reuse = await request(svc.url)
      .post('/api/auth/refresh')
      .set('Cookie', session.refreshCookie)
      .expect(401);
    expect(reuse.body.message).toMatch(/already used/);
    expect(String(reuse.headers['set-cookie'])).toMatch(/svc_refresh=;.*Max-Age=0/);
    // The legitimate holder's newer token died with the family.
    await request(svc.url).post('/api/auth/refresh').set('Cookie', current).expect(401);
    // And so did every access token of the session, the one the rotation handed out and the login's (a thief may
    // hold either); another session of the same user keeps working.
    const me = (token: string) =>
      request(svc.url).get('/api/auth/me').set('Authorization', `Bearer ${token}`);
    await me(first.body.accessToken as string).expect(401);
    await me(session.accessToken).expect(401);
    await me((await login(svc.url)).accessToken).expect(200);
    await eventually(async () => ((await audit('REFRESH_TOKEN_REUSE')).length ? true : undefined));
  });

  it('lets only one of two concurrent refreshes of one token win, and then revokes the family', async () => {
    const session = await login(svc.url);
    const results = await Promise.all(
      Array.from({ length: 5 }, () =>
        request(svc.url).post('/api/auth/refresh').set('Cookie', session.refreshCookie),
      ),
    );
    const winners = results.filter((r) => r.status === 200);
    expect(winners.length).toBeLessThanOrEqual(1);
    expect(results.filter((r) => r.status === 401).length).toBeGreaterThanOrEqual(4);
    for (const winner of winners) {
      await request(svc.url).post('/api/auth/refresh').set('Cookie', refreshCookieFrom(winner)).expect(401);
    }
  });

  it('answers 401 and clears the cookie for a missing or made-up refresh token', async () => {
    const missing = await request(svc.url).post('/api/auth/refresh').expect(401);
    expect(missing.body).toEqual({
      status: 401,
      error: 'Unauthorized',
      message: expect.stringMatching(/missing, expired or revoked/),
    });
    expect(String(missing.headers['set-cookie'])).toMatch(/Max-Age=0/);
    await request(svc.url).post('/api/auth/refresh').set('Cookie', 'svc_refresh=abc.def').expect(401);
  });

  it('logs out: revokes the family, clears the cookie, and is idempotent', async () => {
    const session = await login(svc.url);
    const res = await request(svc.url)
      .post('/api/auth/logout')
      .set('Cookie', session.refreshCookie)
      .expect(204);
    const cleared = String(res.headers['set-cookie']);
    expect(cleared).toMatch(/svc_refresh=;/);
    expect(cleared).toMatch(/Max-Age=0/);
    expect(cleared).toMatch(/Path=\/api\/auth/);
    await request(svc.url).post('/api/auth/refresh').set('Cookie', session.refreshCookie).expect(401);
    await request(svc.url).post('/api/auth/logout').expect(204);
    await eventually(async () => ((await audit('LOGOUT')).length ? true : undefined));
  });

  it('refuses cross-site refresh and logout requests', async () => {
    const session = await login(svc.url);
    await request(svc.url)
      .post('/api/auth/refresh')
      .set('Cookie', session.refreshCookie)
      .set('Sec-Fetch-Site', 'cross-site')
      .expect(403);
    await request(svc.url)
      .post('/api/auth/logout')
      .set('Cookie', session.refreshCookie)
      .set('Origin', 'https://evil.example')
      .expect(403);
    // The refused requests changed nothing: the token still works once.
    await request(svc.url)
      .post('/api/auth/refresh')
      .set('Cookie', session.refreshCookie)
      .set('Sec-Fetch-Site', 'same-origin')
      .expect(200);
  });

  it('refuses credentials sent two ways, and tokens in the query string', async () => {
    const { accessToken } = await login(svc.url);
    const both = await request(svc.url)
      .get(`/api/auth/me?access_token=${accessToken}`)
      .set('Authorization', `Bearer ${accessToken}`)
      .expect(400);
    expect(both.body.message).toMatch(/[Mm]ixing/);
    await request(svc.url).get(`/api/auth/me?access_token=${accessToken}`).expect(401);
  });

  it('stops an access token of a disabled account within a second', async () => {
    const user = await insertUser(svc.dataSource);
    const { accessToken } = await login(svc.url, user.email, user.password);
    await request(svc.url).get('/api/auth/me').set('Authorization', `Bearer ${accessToken}`).expect(200);
    await svc.dataSource.getRepository(UserEntity).update({ id: user.id }, { enabled: false });
    await new Promise((r) => setTimeout(r, 1_100));
    const res = await request(svc.url)
      .post('/api/users/me/api-keys')
      .set('Authorization', `Bearer ${accessToken}`)
      .send({ name: 'sneaky' })
      .expect(401);
    expect(res.body.message).toMatch(/disabled/);
  });

  it('records a successful sign-in with the client address', async () => {
    await login(svc.url);
    const rows = await eventually(async () => {
      const found = await audit('LOGIN_SUCCESS');
      return found.length ? found : undefined;
    });
    expect(rows[0]).toEqual(expect.objectContaining({ actorEmail: ADMIN_EMAIL, ip: '127.0.0.1' }));
  });
});
