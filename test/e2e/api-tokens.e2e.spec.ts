import request from 'supertest';
import { ApiTokenEntity } from '../../src/api-tokens/api-token.entity.js';
import { UserEntity } from '../../src/users/user.entity.js';
import { insertUser } from '../factories/user.factory.js';
import { RunningApp, TestDeployment } from '../support/app.js';
import { login } from '../support/http.js';

describe('API tokens (Profile → API keys)', () => {
  const deployment = new TestDeployment();
  let a: RunningApp;
  let b: { url: string };
  let jwt: string;
  let userId: string;

  beforeAll(async () => {
    [a] = await deployment.start();
    b = await deployment.startProcessReplica();
    const user = await insertUser(a.dataSource);
    userId = user.id;
    jwt = (await login(a.url, user.email, user.password)).accessToken;
  });
  afterAll(() => deployment.stop());

  const create = (body: object, token = jwt) =>
    request(a.url).post('/api/users/me/api-keys').set('Authorization', `Bearer ${token}`).send(body);
  const me = (url: string, token: string) => request(url).get('/api/auth/me').set('Authorization', `Bearer ${token}`);

  it('creates a token shown once, stored only as a hash, working on every replica', async () => {
    const res = await create({ name: 'CI runner' }).expect(201);
    expect(res.body).toEqual({
      id: expect.any(Number),
      name: 'CI runner',
      token: expect.stringMatching(/^tms_[A-Za-z0-9_-]{43}$/),
      prefix: res.body.token.slice(0, 12),
      createdAt: expect.any(String),
      expiresAt: null,
    });
    const stored = await a.dataSource.getRepository(ApiTokenEntity).findOneByOrFail({ id: String(res.body.id) });
    expect(stored.tokenHash).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(stored)).not.toContain(res.body.token);

    const list = await request(a.url).get('/api/users/me/api-keys').set('Authorization', `Bearer ${jwt}`).expect(200);
    expect(list.body.content[0]).toEqual({
      id: res.body.id,
      name: 'CI runner',
      prefix: res.body.prefix,
      createdAt: res.body.createdAt,
      lastUsedAt: null,
      expiresAt: null,
    });
    expect(JSON.stringify(list.body)).not.toContain(res.body.token);

    expect((await me(a.url, res.body.token).expect(200)).body.id).toBe(Number(userId));
    await me(b.url, res.body.token).expect(200);
  });

  it('records last use, at most once a minute', async () => {
    const { body } = await create({ name: 'usage' }).expect(201);
    await me(a.url, body.token).expect(200);
    const repo = a.dataSource.getRepository(ApiTokenEntity);
    let first: Date | null = null;
    for (let i = 0; i < 50 && !first; i++) {
      first = (await repo.findOneByOrFail({ id: String(body.id) })).lastUsedAt;
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(first).toBeInstanceOf(Date);
    await me(a.url, body.token).expect(200);
    await me(b.url, body.token).expect(200);
    await new Promise((r) => setTimeout(r, 100));
    expect((await repo.findOneByOrFail({ id: String(body.id) })).lastUsedAt).toEqual(first);
  });

  it('stops a revoked token at once here and within two seconds on the other replica', async () => {
    const { body } = await create({ name: 'to revoke' }).expect(201);
    await me(a.url, body.token).expect(200);
    await me(b.url, body.token).expect(200);
    await request(a.url).delete(`/api/users/me/api-keys/${body.id}`).set('Authorization', `Bearer ${jwt}`).expect(204);
    const res = await me(a.url, body.token).expect(401);
    expect(res.body.message).toMatch(/invalid, expired or revoked/);
    await new Promise((r) => setTimeout(r, 1_100));
    await me(b.url, body.token).expect(401);
    await request(a.url).delete(`/api/users/me/api-keys/${body.id}`).set('Authorization', `Bearer ${jwt}`).expect(404);
  });

  it('honours expiry, and refuses an expiry in the past', async () => {
    const past = await create({ name: 'old', expiresAt: '2020-01-01T00:00:00Z' }).expect(400);
    expect(past.body.message).toMatch(/expiresAt/);
    const soon = new Date(Date.now() + 1_500).toISOString();
    const { body } = await create({ name: 'short-lived', expiresAt: soon }).expect(201);
    await me(a.url, body.token).expect(200);
    await new Promise((r) => setTimeout(r, 1_700));
    await me(a.url, body.token).expect(401);
  });

  it('stops working when its user is disabled', async () => {
    const other = await insertUser(a.dataSource);
    const otherJwt = (await login(a.url, other.email, other.password)).accessToken;
    const { body } = await create({ name: 'x' }, otherJwt).expect(201);
    await me(a.url, body.token).expect(200);
    await a.dataSource.getRepository(UserEntity).update({ id: other.id }, { enabled: false });
    await new Promise((r) => setTimeout(r, 1_100));
    await me(a.url, body.token).expect(401);
  });

  it('cannot manage API tokens itself', async () => {
    const { body } = await create({ name: 'automation' }).expect(201);
    const asToken = await create({ name: 'escalate' }, body.token).expect(403);
    expect(asToken.body.message).toMatch(/API tokens cannot manage/);
    await request(a.url).get('/api/users/me/api-keys').set('Authorization', `Bearer ${body.token}`).expect(403);
    await request(a.url).delete(`/api/users/me/api-keys/${body.id}`).set('Authorization', `Bearer ${body.token}`).expect(403);
  });

  it("cannot see or revoke another user's token (404)", async () => {
    const other = await insertUser(a.dataSource);
    const otherJwt = (await login(a.url, other.email, other.password)).accessToken;
    const { body } = await create({ name: 'mine' }).expect(201);
    await request(a.url).delete(`/api/users/me/api-keys/${body.id}`).set('Authorization', `Bearer ${otherJwt}`).expect(404);
    const theirs = await request(a.url).get('/api/users/me/api-keys').set('Authorization', `Bearer ${otherJwt}`).expect(200);
    expect(theirs.body.totalElements).toBe(0);
    await me(a.url, body.token).expect(200);
  });

  it('refuses made-up tokens and tokens in the query string', async () => {
    await me(a.url, `tms_${'A'.repeat(43)}`).expect(401);
    await me(a.url, 'tms_short').expect(401);
    const { body } = await create({ name: 'q' }).expect(201);
    await request(a.url).get(`/api/auth/me?access_token=${body.token}`).expect(401);
  });

  it.each([
    [{}, /name/],
    [{ name: '' }, /name/],
    [{ name: 'a\nb' }, /name/],
    [{ name: 'a\u0000b' }, /^name must not contain NUL/],
    [{ name: 'a\uFE0F'.repeat(100) }, /^name must be shorter than or equal to 100 characters$/],
    [{ name: 'x', expiresAt: 'tomorrow' }, /expiresAt/],
    [{ name: 'x', scope: 'all' }, /scope/],
  ])('validates %j', async (body, message) => {
    const res = await create(body).expect(400);
    expect(res.body.message).toMatch(message);
  });

  it('pages and sorts the list, refusing unknown sort fields', async () => {
    const res = await request(a.url)
      .get('/api/users/me/api-keys?size=2&sort=name,asc')
      .set('Authorization', `Bearer ${jwt}`)
      .expect(200);
    expect(res.body.content).toHaveLength(2);
    expect(res.body.size).toBe(2);
    const names = res.body.content.map((t: { name: string }) => t.name);
    expect([...names].sort()).toEqual(names);
    await request(a.url).get('/api/users/me/api-keys?sort=tokenHash,asc').set('Authorization', `Bearer ${jwt}`).expect(400);
  });
});
