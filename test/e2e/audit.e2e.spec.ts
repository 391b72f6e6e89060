import request from 'supertest';
import { AuditEventEntity } from '../../src/audit/audit-event.entity.js';
import { insertUser } from '../factories/user.factory.js';
import { RunningApp, TestDeployment } from '../support/app.js';
import { login } from '../support/http.js';

describe('GET /api/admin/audit', () => {
  const deployment = new TestDeployment();
  let svc: RunningApp;
  let adminToken: string;

  beforeAll(async () => {
    [svc] = await deployment.start();
    const repo = svc.dataSource.getRepository(AuditEventEntity);
    await repo.insert([
      { type: 'LOGIN_FAILURE', actorId: '1', at: new Date('2026-01-01T00:00:00Z'), details: {} },
      { type: 'LOGIN_FAILURE', actorId: '2', at: new Date('2026-02-01T00:00:00Z'), details: {} },
      { type: 'LOGOUT', actorId: '2', at: new Date('2026-03-01T00:00:00Z'), details: {} },
    ]);
    adminToken = (await login(svc.url)).accessToken;
  });
  afterAll(() => deployment.stop());

  const get = (query: string, token = adminToken) =>
    request(svc.url).get(`/api/admin/audit${query}`).set('Authorization', `Bearer ${token}`);

  it('pages the trail newest first', async () => {
    const res = await get('?size=2&type=LOGIN_FAILURE').expect(200);
    expect(res.body).toEqual({ content: expect.any(Array), page: 0, size: 2, totalElements: 2, totalPages: 1 });
    expect(res.body.content.map((e: { at: string }) => e.at)).toEqual([
      '2026-02-01T00:00:00.000Z',
      '2026-01-01T00:00:00.000Z',
    ]);
    expect(res.body.content[0]).toEqual({
      id: expect.any(Number),
      at: '2026-02-01T00:00:00.000Z',
      type: 'LOGIN_FAILURE',
      actorId: 2,
      actorEmail: null,
      ip: null,
      target: null,
      targetLabel: null,
      details: {},
    });
  });

  it('filters by actor and time range and sorts on request', async () => {
    const byActor = await get('?actorId=2&sort=at,asc').expect(200);
    expect(byActor.body.content.map((e: { type: string }) => e.type)).toEqual(['LOGIN_FAILURE', 'LOGOUT']);
    const range = await get('?from=2026-01-15T00:00:00Z&to=2026-02-15T00:00:00Z').expect(200);
    expect(range.body.totalElements).toBe(1);
    const ascending = await get('?sort=id,asc&type=LOGIN_FAILURE').expect(200);
    const ids = ascending.body.content.map((e: { id: number }) => e.id);
    expect(ids).toEqual([...ids].sort((x: number, y: number) => x - y));
    const second = await get('?type=LOGIN_FAILURE&size=1&page=1').expect(200);
    expect(second.body.content[0].at).toBe('2026-01-01T00:00:00.000Z');
  });

  it.each([
    ['?size=0', /size/],
    ['?size=501', /size/],
    ['?page=-1', /page/],
    ['?page=x', /page/],
    ['?sort=password,asc', /sort/],
    ['?sort=at,sideways', /sort/],
    ['?type=NOT_A_TYPE', /type/],
    ['?actorId=abc', /actorId/],
    ['?from=yesterday', /from/],
    ['?unknown=1', /unknown/],
  ])('refuses %s with 400', async (query, message) => {
    const res = await get(query).expect(400);
    expect(res.body).toEqual({ status: 400, error: 'Bad Request', message: expect.stringMatching(message) });
  });

  it('is for platform administrators only', async () => {
    const user = await insertUser(svc.dataSource);
    const { accessToken } = await login(svc.url, user.email, user.password);
    const res = await get('', accessToken).expect(403);
    expect(res.body.status).toBe(403);
  });
});
