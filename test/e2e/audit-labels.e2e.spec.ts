import { jest } from '@jest/globals';
import request from 'supertest';
import type { QueryRunner } from 'typeorm';
import { AuditEventEntity } from '../../src/audit/audit-event.entity.js';
import { insertUser } from '../factories/user.factory.js';
import { ADMIN_EMAIL, RunningApp, TestDeployment } from '../support/app.js';
import { eventually, login } from '../support/http.js';

interface Item {
  type: string;
  actorId: number | null;
  actorEmail: string | null;
  target: string | null;
  targetLabel: string | null;
  details: Record<string, unknown>;
}

/** The audit trail names people and projects as people know them: the actor's email, the project's name. */
describe('GET /api/admin/audit: who and what, in words', () => {
  const deployment = new TestDeployment();
  let svc: RunningApp;
  let token: string;

  beforeAll(async () => {
    [svc] = await deployment.start();
    token = (await login(svc.url)).accessToken;
  });
  afterAll(() => deployment.stop());

  const http = () => request(svc.url);
  const auth = (t = token) => ({ Authorization: `Bearer ${t}` });
  const audit = async (query: string): Promise<Item[]> =>
    (await http().get(`/api/admin/audit${query}`).set(auth()).expect(200)).body.content as Item[];
  const newProject = async (key: string, name: string): Promise<number> =>
    (await http().post('/api/projects').set(auth()).send({ key, name }).expect(201)).body.id as number;
  /** The events of `type` on `target`, once the (asynchronous) trail has them. */
  const eventsOf = (type: string, target: string) =>
    eventually(async () => {
      const items = (await audit(`?type=${type}&size=100`)).filter((e) => e.target === target);
      return items.length ? items : undefined;
    });

  it("labels a project target with the project's name and fills the actor's email", async () => {
    const id = await newProject('WEB', 'Web shop');
    const [created] = await eventsOf('PROJECT_CREATED', `project:${id}`);
    expect(created).toMatchObject({
      target: `project:${id}`,
      targetLabel: 'Web shop',
      actorEmail: ADMIN_EMAIL,
    });
    // Stored with the event (the address it had then), not only looked up when read.
    const stored = await svc.dataSource
      .getRepository(AuditEventEntity)
      .findOneByOrFail({ type: 'PROJECT_CREATED', target: `project:${id}` });
    expect(stored.actorEmail).toBe(ADMIN_EMAIL);
  });

  it('follows a rename, and says "(deleted)" for a project that is gone, its name kept in the deletion event', async () => {
    const id = await newProject('OLD', 'Old shop');
    await http().patch(`/api/projects/${id}`).set(auth()).send({ name: 'Older shop' }).expect(200);
    await eventsOf('PROJECT_UPDATED', `project:${id}`);
    expect(
      (await audit('?type=PROJECT_CREATED')).find((e) => e.target === `project:${id}`)?.targetLabel,
    ).toBe('Older shop');
    await http().delete(`/api/projects/${id}`).set(auth()).expect(204);
    const [deleted] = await eventsOf('PROJECT_DELETED', `project:${id}`);
    expect(deleted.targetLabel).toBe(`project #${id} (deleted)`);
    expect(deleted.target).toBe(`project:${id}`);
    expect(deleted.details).toEqual({ key: 'OLD', name: 'Older shop' });
    const [created] = await eventsOf('PROJECT_CREATED', `project:${id}`);
    expect(created.targetLabel).toBe(`project #${id} (deleted)`);
  });

  it("labels groups by name and users by email, leaves other targets unlabelled, and fills an old event's actor", async () => {
    const user = await insertUser(svc.dataSource, { fullName: 'Ada Lovelace' });
    const group = (await http().post('/api/admin/groups').set(auth()).send({ name: 'QA-Team' }).expect(201))
      .body.id as number;
    await http().patch(`/api/admin/users/${user.id}`).set(auth()).send({ admin: true }).expect(200);
    const [changed] = await eventsOf('GROUP_CHANGED', `group:${group}`);
    expect(changed.targetLabel).toBe('QA-Team');
    const [updated] = await eventsOf('USER_UPDATED', `user:${user.id}`);
    expect(updated.targetLabel).toBe(user.email);

    // Rows written before the email was kept (or by hand): the actor's current email; odd targets stay as they are.
    await svc.dataSource.getRepository(AuditEventEntity).insert([
      { type: 'LOGOUT', actorId: user.id, actorEmail: null, target: 'POST /api/auth/logout', details: {} },
      {
        type: 'LOGOUT',
        actorId: '987654321',
        actorEmail: null,
        target: 'project:99999999999999999999',
        details: {},
      },
    ]);
    const logouts = await audit('?type=LOGOUT');
    expect(logouts.find((e) => e.actorId === Number(user.id))).toMatchObject({
      actorEmail: user.email,
      target: 'POST /api/auth/logout',
      targetLabel: null,
    });
    expect(logouts.find((e) => e.actorId === 987654321)).toMatchObject({
      actorEmail: null,
      target: 'project:99999999999999999999',
      targetLabel: null,
    });
  });

  it("looks the page's names up in one query, not one a row", async () => {
    const ids: number[] = [];
    for (let i = 0; i < 12; i++) {
      ids.push(await newProject(`MANY${i}`, `Many ${i}`));
    }
    await eventually(async () =>
      (await audit('?type=PROJECT_CREATED&size=100')).filter(
        (e) => e.target && ids.includes(Number(e.target.split(':')[1])),
      ).length === ids.length
        ? true
        : undefined,
    );
    // Every statement that reads the projects table while one page is answered.
    const reads = async (size: number) => {
      const statements: string[] = [];
      const create = svc.dataSource.createQueryRunner.bind(svc.dataSource);
      const spy = jest.spyOn(svc.dataSource, 'createQueryRunner').mockImplementation((mode) => {
        const runner: QueryRunner = create(mode);
        const query = runner.query.bind(runner);
        runner.query = ((sql: string, ...rest: unknown[]) => {
          statements.push(sql);
          return (query as (...a: unknown[]) => unknown)(sql, ...rest);
        }) as QueryRunner['query'];
        return runner;
      });
      try {
        const page = await audit(`?type=PROJECT_CREATED&size=${size}`);
        expect(page.filter((e) => e.targetLabel?.startsWith('Many ')).length).toBeGreaterThanOrEqual(
          Math.min(size, 12),
        );
      } finally {
        spy.mockRestore();
      }
      return statements.filter((sql) => /\bprojects\b/.test(sql)).length;
    };
    expect(await reads(12)).toBe(1);
    expect(await reads(2)).toBe(1);
  });

  it("is for platform administrators only, as is the list of a group's members", async () => {
    const user = await insertUser(svc.dataSource);
    const { accessToken } = await login(svc.url, user.email, user.password);
    const group = (await http().post('/api/admin/groups').set(auth()).send({ name: 'Closed' }).expect(201))
      .body.id as number;
    for (const path of ['/api/admin/audit', `/api/admin/groups/${group}/members`, '/api/admin/users?q=ada']) {
      const res = await http().get(path).set(auth(accessToken)).expect(403);
      expect(res.body).toEqual({ status: 403, error: 'Forbidden', message: expect.any(String) });
    }
  });
});
