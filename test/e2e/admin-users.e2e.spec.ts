import request from 'supertest';
import { AuditEventEntity } from '../../src/audit/audit-event.entity.js';
import { UserEntity } from '../../src/users/user.entity.js';
import { insertUser } from '../factories/user.factory.js';
import { ADMIN_EMAIL, RunningApp, TestDeployment } from '../support/app.js';
import { eventually, login } from '../support/http.js';

describe('Administration: users', () => {
  const deployment = new TestDeployment();
  let svc: RunningApp;
  let adminToken: string;
  let adminId: number;

  beforeAll(async () => {
    [svc] = await deployment.start();
    adminToken = (await login(svc.url)).accessToken;
    const me = await request(svc.url)
      .get('/api/auth/me')
      .set('Authorization', `Bearer ${adminToken}`)
      .expect(200);
    adminId = me.body.id;
  });
  afterAll(() => deployment.stop());

  const http = () => request(svc.url);
  const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });
  const patch = (id: number | string, body: object, token = adminToken) =>
    http().patch(`/api/admin/users/${id}`).set(bearer(token)).send(body);
  const createApiToken = async (jwt: string): Promise<string> => {
    const res = await http().post('/api/users/me/api-keys').set(bearer(jwt)).send({ name: 'ci' }).expect(201);
    return res.body.token as string;
  };

  describe('GET /api/admin/users', () => {
    let alice: UserEntity;
    let bob: UserEntity;
    let carol: UserEntity;

    beforeAll(async () => {
      alice = await insertUser(svc.dataSource, { email: 'alice.search@example.com', fullName: 'Alice Zeta' });
      bob = await insertUser(svc.dataSource, { email: 'bob.search@example.com', fullName: 'Bob 100% Real' });
      carol = await insertUser(svc.dataSource, { email: 'carol@other.org', fullName: 'Carol SEARCHLIGHT' });
    });

    const list = (query: string, token = adminToken) =>
      http().get(`/api/admin/users${query}`).set(bearer(token));

    it('pages every user in id order with the documented fields', async () => {
      const res = await list('').expect(200);
      expect(res.body).toEqual({
        content: expect.any(Array),
        page: 0,
        size: 20,
        totalElements: 4,
        totalPages: 1,
      });
      const ids = res.body.content.map((u: { id: number }) => u.id);
      expect(ids).toEqual([...ids].sort((a, b) => a - b));
      expect(res.body.content[0]).toEqual({
        id: adminId,
        email: ADMIN_EMAIL,
        fullName: 'Administrator',
        admin: true,
        enabled: true,
        authSource: 'LOCAL',
        emailVerified: true,
        createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      });
      const aliceRow = res.body.content.find((u: { email: string }) => u.email === alice.email);
      expect(aliceRow).toEqual(
        expect.objectContaining({ id: Number(alice.id), admin: false, enabled: true }),
      );
      expect(JSON.stringify(res.body)).not.toMatch(/password/i);
    });

    it('searches email and full name case-insensitively', async () => {
      const emails = async (q: string) =>
        (await list(`?q=${encodeURIComponent(q)}`).expect(200)).body.content.map(
          (u: { email: string }) => u.email,
        );
      expect(await emails('SEARCH')).toEqual([alice.email, bob.email, carol.email]);
      expect(await emails('zeta')).toEqual([alice.email]);
      expect(await emails('@OTHER.org')).toEqual([carol.email]);
      expect(await emails('nobody-matches')).toEqual([]);
    });

    it('takes LIKE wildcards in q literally', async () => {
      const res = await list(`?q=${encodeURIComponent('100%')}`).expect(200);
      expect(res.body.content.map((u: { email: string }) => u.email)).toEqual([bob.email]);
      expect((await list('?q=_').expect(200)).body.totalElements).toBe(0);
    });

    it('refuses a q it could not search for, naming it', async () => {
      const res = await list(`?q=${encodeURIComponent('a\u0000b')}`).expect(400);
      expect(res.body.message).toMatch(/^q must not contain NUL/);
    });

    it('pages and sorts on request', async () => {
      const second = await list('?q=search&size=2&page=1').expect(200);
      expect(second.body).toEqual(
        expect.objectContaining({ page: 1, size: 2, totalElements: 3, totalPages: 2 }),
      );
      expect(second.body.content.map((u: { email: string }) => u.email)).toEqual([carol.email]);

      const byName = await list('?q=search&sort=fullName,desc').expect(200);
      expect(byName.body.content.map((u: { fullName: string }) => u.fullName)).toEqual([
        'Carol SEARCHLIGHT',
        'Bob 100% Real',
        'Alice Zeta',
      ]);
      const byIdDesc = await list('?sort=id,desc').expect(200);
      const ids = byIdDesc.body.content.map((u: { id: number }) => u.id);
      expect(ids).toEqual([...ids].sort((a, b) => b - a));
      const byEmail = await list('?q=search&sort=email,desc').expect(200);
      expect(byEmail.body.content.map((u: { email: string }) => u.email)).toEqual([
        carol.email,
        bob.email,
        alice.email,
      ]);
      await list('?sort=createdAt,asc&sort=id,desc').expect(200);
    });

    it.each([
      ['?size=0', /size/],
      ['?size=501', /size/],
      ['?page=-1', /page/],
      ['?page=x', /page/],
      ['?sort=passwordHash,asc', /sort field 'passwordHash'.*id, email, fullName, createdAt/],
      ['?sort=email,sideways', /sort/],
      [`?q=${'x'.repeat(201)}`, /q must be at most 200/],
      ['?q=a&q=b', /q/],
      ['?unknown=1', /unknown/],
    ])('refuses %s with 400', async (query, message) => {
      const res = await list(query).expect(400);
      expect(res.body).toEqual({
        status: 400,
        error: 'Bad Request',
        message: expect.stringMatching(message),
      });
    });
  });

  describe('PATCH /api/admin/users/{id}', () => {
    it('makes a user a platform admin, who then reaches the admin endpoints, and back', async () => {
      const user = await insertUser(svc.dataSource);
      const { accessToken } = await login(svc.url, user.email, user.password);
      await http().get('/api/admin/audit').set(bearer(accessToken)).expect(403);

      const res = await patch(user.id, { admin: true }).expect(200);
      expect(res.body).toEqual(
        expect.objectContaining({ id: Number(user.id), email: user.email, admin: true, enabled: true }),
      );
      // The same access token: admin rights are checked against the database on every request.
      await http().get('/api/admin/audit').set(bearer(accessToken)).expect(200);
      await http().get('/api/admin/users').set(bearer(accessToken)).expect(200);

      await patch(user.id, { admin: false }).expect(200);
      await http().get('/api/admin/audit').set(bearer(accessToken)).expect(403);

      const event = await eventually(async () => {
        const rows = await svc.dataSource
          .getRepository(AuditEventEntity)
          .find({ where: { type: 'USER_UPDATED', target: `user:${user.id}` }, order: { id: 'ASC' } });
        return rows.length >= 2 ? rows : undefined;
      });
      expect(event[0]).toEqual(
        expect.objectContaining({
          actorId: String(adminId),
          actorEmail: ADMIN_EMAIL,
          details: { email: user.email, changes: { admin: { from: false, to: true } } },
        }),
      );
      expect(event[1].details).toEqual({ email: user.email, changes: { admin: { from: true, to: false } } });
    });

    it('disabling revokes sessions and API tokens and refuses sign-in', async () => {
      const user = await insertUser(svc.dataSource);
      const session = await login(svc.url, user.email, user.password);
      // A second session, first presented after the account is enabled again: only a revocation stops it.
      const untouched = await login(svc.url, user.email, user.password);
      const apiToken = await createApiToken(session.accessToken);
      await http().get('/api/auth/me').set(bearer(apiToken)).expect(200);

      const res = await patch(user.id, { enabled: false }).expect(200);
      expect(res.body).toEqual(
        expect.objectContaining({ id: Number(user.id), enabled: false, admin: false }),
      );

      await http().post('/api/auth/refresh').set('Cookie', session.refreshCookie).expect(401);
      await http().get('/api/auth/me').set(bearer(apiToken)).expect(401);
      await http().get('/api/auth/me').set(bearer(session.accessToken)).expect(401);
      const refused = await http()
        .post('/api/auth/login')
        .send({ username: user.email, password: user.password });
      expect(refused.status).toBe(401);

      const stored = await svc.dataSource.getRepository(UserEntity).findOneByOrFail({ id: user.id });
      expect(stored.enabled).toBe(false);
      const tokens = await svc.dataSource.query(
        'SELECT count(*)::int AS n FROM api_tokens WHERE user_id = $1',
        [user.id],
      );
      expect(tokens[0].n).toBe(0);

      // Enabled again: the user can sign in, but the revoked credentials stay dead.
      await patch(user.id, { enabled: true }).expect(200);
      const again = await login(svc.url, user.email, user.password);
      await http().get('/api/auth/me').set(bearer(again.accessToken)).expect(200);
      await http().get('/api/auth/me').set(bearer(apiToken)).expect(401);
      await http().post('/api/auth/refresh').set('Cookie', untouched.refreshCookie).expect(401);
      const fresh = await http().post('/api/auth/refresh').set('Cookie', again.refreshCookie).expect(200);
      expect(fresh.body.accessToken).toEqual(expect.any(String));

      const audit = await eventually(async () => {
        const rows = await svc.dataSource
          .getRepository(AuditEventEntity)
          .find({ where: { type: 'USER_UPDATED', target: `user:${user.id}` }, order: { id: 'ASC' } });
        return rows.length >= 2 ? rows : undefined;
      });
      expect(audit[0].details).toEqual({
        email: user.email,
        changes: { enabled: { from: true, to: false } },
      });
    });

    it('refuses to let admins demote or disable themselves', async () => {
      const demote = await patch(adminId, { admin: false }).expect(409);
      expect(demote.body).toEqual({
        status: 409,
        error: 'Conflict',
        message: expect.stringMatching(/cannot remove your own admin rights/),
      });
      const disable = await patch(adminId, { enabled: false, admin: true }).expect(409);
      expect(disable.body.message).toMatch(/cannot disable your own account/);
      const me = await http().get('/api/auth/me').set(bearer(adminToken)).expect(200);
      expect(me.body.admin).toBe(true);
      // Confirming the current state is harmless.
      await patch(adminId, { admin: true, enabled: true }).expect(200);
    });

    it('lets one admin demote another', async () => {
      const [first, second] = [
        await insertUser(svc.dataSource, { admin: true }),
        await insertUser(svc.dataSource, { admin: true }),
      ];
      const { accessToken } = await login(svc.url, first.email, first.password);
      const res = await patch(second.id, { admin: false }, accessToken).expect(200);
      expect(res.body.admin).toBe(false);
    });

    it.each(['999999', 'abc', '1.5', '-1', '0', '99999999999999999999', '9223372036854775808'])(
      'answers 404 for user %s',
      async (id) => {
        const res = await patch(id, { admin: true }).expect(404);
        expect(res.body).toEqual({
          status: 404,
          error: 'Not Found',
          message: expect.stringContaining('not found'),
        });
      },
    );

    it.each([
      [{ admin: 'yes' }, /admin must be true or false/],
      [{ admin: null }, /admin must be true or false/],
      [{ enabled: 1 }, /enabled must be true or false/],
      [{ admin: true, email: 'x@example.com' }, /email/],
    ])('refuses the body %j with 400', async (body, message) => {
      const user = await insertUser(svc.dataSource);
      const res = await patch(user.id, body).expect(400);
      expect(res.body.message).toMatch(message);
      const stored = await svc.dataSource.getRepository(UserEntity).findOneByOrFail({ id: user.id });
      expect(stored.admin).toBe(false);
    });
  });

  describe('access', () => {
    const endpoints: [string, string, object?][] = [
      ['get', '/api/admin/users'],
      ['patch', '/api/admin/users/1', { admin: true }],
      ['post', '/api/admin/groups', { name: 'never' }],
      ['get', '/api/admin/groups'],
      ['get', '/api/admin/groups/1'],
      ['delete', '/api/admin/groups/1'],
      ['put', '/api/admin/groups/1/bindings', []],
      ['put', '/api/admin/groups/1/members/1'],
      ['delete', '/api/admin/groups/1/members/1'],
    ];

    const call = (method: string, path: string, token: string | undefined, body?: object) => {
      const req = (http() as unknown as Record<string, (p: string) => request.Test>)[method](path);
      if (token) {
        req.set(bearer(token));
      }
      return body ? req.send(body) : req;
    };

    it('answers 403 to signed-in users who are not platform admins, on every endpoint', async () => {
      const user = await insertUser(svc.dataSource);
      const { accessToken } = await login(svc.url, user.email, user.password);
      const apiToken = await createApiToken(accessToken);
      for (const [method, path, body] of endpoints) {
        for (const token of [accessToken, apiToken]) {
          const res = await call(method, path, token, body);
          expect({ method, path, status: res.status, body: res.body }).toEqual({
            method,
            path,
            status: 403,
            body: { status: 403, error: 'Forbidden', message: 'Only platform administrators may do this' },
          });
        }
      }
      const groups = await svc.dataSource.query('SELECT count(*)::int AS n FROM groups');
      expect(groups[0].n).toBe(0);
    });

    it('answers 401 without credentials', async () => {
      for (const [method, path, body] of endpoints) {
        const res = await call(method, path, undefined, body);
        expect({ path, status: res.status }).toEqual({ path, status: 401 });
      }
    });

    it("works with a platform admin's API token", async () => {
      const apiToken = await createApiToken(adminToken);
      await http().get('/api/admin/users').set(bearer(apiToken)).expect(200);
      const user = await insertUser(svc.dataSource);
      const res = await patch(user.id, { admin: true }, apiToken).expect(200);
      expect(res.body.admin).toBe(true);
      const group = await http()
        .post('/api/admin/groups')
        .set(bearer(apiToken))
        .send({ name: 'via-token' })
        .expect(201);
      await http().delete(`/api/admin/groups/${group.body.id}`).set(bearer(apiToken)).expect(204);
    });
  });
});
