import request from 'supertest';
import { GroupMemberEntity, ProjectEntity } from '../../src/access/entities.js';
import { AuditEventEntity } from '../../src/audit/audit-event.entity.js';
import { insertUser } from '../factories/user.factory.js';
import { ADMIN_EMAIL, RunningApp, TestDeployment } from '../support/app.js';
import { eventually, login } from '../support/http.js';

describe('Administration: groups', () => {
  const deployment = new TestDeployment();
  let svc: RunningApp;
  let adminToken: string;
  let p1: number;
  let p2: number;
  let p3: number;

  beforeAll(async () => {
    [svc] = await deployment.start();
    adminToken = (await login(svc.url)).accessToken;
    const projects = svc.dataSource.getRepository(ProjectEntity);
    // One after the other, so that p1 < p2 < p3 (bindings come back in project id order).
    p1 = Number((await projects.save({ key: 'P1', name: 'P1' })).id);
    p2 = Number((await projects.save({ key: 'P2', name: 'P2' })).id);
    p3 = Number((await projects.save({ key: 'P3', name: 'P3' })).id);
  });
  afterAll(() => deployment.stop());

  const http = () => request(svc.url);
  const auth = () => ({ Authorization: `Bearer ${adminToken}` });
  const createGroup = (name: unknown) => http().post('/api/admin/groups').set(auth()).send({ name });
  const getGroup = (id: number | string) => http().get(`/api/admin/groups/${id}`).set(auth());
  const putBindings = (id: number | string, body: unknown) =>
    http()
      .put(`/api/admin/groups/${id}/bindings`)
      .set(auth())
      .set('Content-Type', 'application/json')
      .send(JSON.stringify(body));
  const member = (method: 'put' | 'delete', id: number | string, userId: number | string) =>
    http()[method](`/api/admin/groups/${id}/members/${userId}`).set(auth());
  const newGroup = async (name: string): Promise<number> => (await createGroup(name).expect(201)).body.id;
  const groupEvents = async (groupId: number, count: number) =>
    eventually(async () => {
      const rows = await svc.dataSource
        .getRepository(AuditEventEntity)
        .find({ where: { type: 'GROUP_CHANGED', target: `group:${groupId}` }, order: { id: 'ASC' } });
      return rows.length >= count ? rows : undefined;
    });

  describe('rename, and members with their source', () => {
    it('renames a group exactly as given, refusing a name another group has, and audits it', async () => {
      const id = await newGroup('Renamed Before');
      await newGroup('Taken Name');
      const res = await http().patch(`/api/admin/groups/${id}`).set(auth()).send({ name: 'renamed after' }).expect(200);
      expect(res.body).toEqual(expect.objectContaining({ id, name: 'renamed after', bindings: [] }));
      const taken = await http().patch(`/api/admin/groups/${id}`).set(auth()).send({ name: 'Taken Name' }).expect(409);
      expect(taken.body.message).toBe('A group named "Taken Name" already exists');
      await http().patch('/api/admin/groups/999999').set(auth()).send({ name: 'x' }).expect(404);
      await http().patch(`/api/admin/groups/${id}`).set(auth()).send({ name: '' }).expect(400);
      const events = await groupEvents(id, 2);
      expect(events[1].details).toEqual(expect.objectContaining({ action: 'RENAMED', from: 'Renamed Before', name: 'renamed after' }));
    });

    it('lists the members, each membership with its source', async () => {
      const id = await newGroup('With Members');
      const [manual, synced] = [await insertUser(svc.dataSource), await insertUser(svc.dataSource)];
      await member('put', id, manual.id).expect(204);
      await svc.dataSource.getRepository(GroupMemberEntity).save({ groupId: String(id), userId: synced.id, source: 'DIRECTORY' });
      const res = await http().get(`/api/admin/groups/${id}/members`).set(auth()).expect(200);
      expect(res.body.totalElements).toBe(2);
      expect(res.body.content).toEqual(
        expect.arrayContaining([
          { userId: Number(manual.id), email: manual.email, fullName: expect.any(String), source: 'MANUAL' },
          { userId: Number(synced.id), email: synced.email, fullName: expect.any(String), source: 'DIRECTORY' },
        ]),
      );
      await http().get('/api/admin/groups/999999/members').set(auth()).expect(404);
    });
  });

  describe('create, read, list, delete', () => {
    it('creates a group with no bindings', async () => {
      const res = await createGroup('Platform Team').expect(201);
      expect(res.body).toEqual({ id: expect.any(Number), name: 'Platform Team', bindings: [] });
      const read = await getGroup(res.body.id).expect(200);
      expect(read.body).toEqual({ id: res.body.id, name: 'Platform Team', bindings: [], memberCount: 0 });
      const [event] = await groupEvents(res.body.id, 1);
      expect(event).toEqual(
        expect.objectContaining({
          actorEmail: ADMIN_EMAIL,
          details: { action: 'CREATED', name: 'Platform Team' },
        }),
      );
    });

    it('refuses a duplicate name with 409 but treats names case-sensitively and exactly', async () => {
      await createGroup('QA').expect(201);
      const dup = await createGroup('QA').expect(409);
      expect(dup.body).toEqual({ status: 409, error: 'Conflict', message: expect.stringContaining('"QA"') });
      const lower = await createGroup('qa').expect(201);
      expect(lower.body.name).toBe('qa');
      // Never trimmed: directory group names are matched exactly.
      const spaced = await createGroup(' QA ').expect(201);
      expect(spaced.body.name).toBe(' QA ');
      const unicode = await createGroup('Qualité 品質').expect(201);
      expect((await getGroup(unicode.body.id).expect(200)).body.name).toBe('Qualité 品質');
    });

    it.each([
      ['', /name must not be empty/],
      ['   ', /name must not be blank/],
      ['x'.repeat(201), /name must be at most 200/],
      ['line\nbreak', /control characters/],
      ['tab\there', /control characters/],
      ['nul\u0000', /control characters/],
      ['bell\u0007', /control characters/],
      [42, /^name must be a string$/],
      [undefined, /^name is required$/],
    ])('refuses the name %j with 400', async (name, message) => {
      const res = await createGroup(name).expect(400);
      expect(res.body).toEqual({
        status: 400,
        error: 'Bad Request',
        message: expect.stringMatching(message),
      });
    });

    it('accepts a 200-character name and refuses unknown fields', async () => {
      await createGroup('n'.repeat(200)).expect(201);
      const emoji = await createGroup('😀'.repeat(200)).expect(201);
      expect(emoji.body.name).toBe('😀'.repeat(200));
      await createGroup('😀'.repeat(201)).expect(400);
      const lone = await createGroup('broken \ud800 surrogate').expect(400);
      expect(lone.body.message).toMatch(/control characters/);
      const res = await http()
        .post('/api/admin/groups')
        .set(auth())
        .send({ name: 'extra', id: 5 })
        .expect(400);
      expect(res.body.message).toMatch(/id/);
      await http().post('/api/admin/groups').set(auth()).send(['x']).expect(400);
    });

    it('lists groups by name with member counts, pages and sorts', async () => {
      await svc.dataSource.query('DELETE FROM groups');
      const b = await newGroup('beta');
      const a = await newGroup('alpha');
      const c = await newGroup('gamma');
      const user = await insertUser(svc.dataSource);
      await member('put', a, user.id).expect(204);

      const res = await http().get('/api/admin/groups').set(auth()).expect(200);
      expect(res.body).toEqual({
        content: [
          { id: a, name: 'alpha', memberCount: 1 },
          { id: b, name: 'beta', memberCount: 0 },
          { id: c, name: 'gamma', memberCount: 0 },
        ],
        page: 0,
        size: 20,
        totalElements: 3,
        totalPages: 1,
      });
      const byId = await http().get('/api/admin/groups?sort=id,desc').set(auth()).expect(200);
      expect(byId.body.content.map((g: { id: number }) => g.id)).toEqual([c, a, b]);
      const page = await http().get('/api/admin/groups?sort=name,desc&size=1&page=1').set(auth()).expect(200);
      expect(page.body).toEqual(
        expect.objectContaining({ content: [{ id: b, name: 'beta', memberCount: 0 }], totalPages: 3 }),
      );
    });

    it.each([['?sort=memberCount,asc'], ['?sort=createdAt'], ['?size=0'], ['?page=-1'], ['?q=x']])(
      'refuses the list query %s with 400',
      async (query) => {
        const res = await http().get(`/api/admin/groups${query}`).set(auth()).expect(400);
        expect(res.body.status).toBe(400);
      },
    );

    it('deletes a group with its bindings and memberships', async () => {
      const id = await newGroup('to-delete');
      const user = await insertUser(svc.dataSource);
      await putBindings(id, [{ projectId: p1, role: 'VIEWER' }]).expect(200);
      await member('put', id, user.id).expect(204);
      await http().delete(`/api/admin/groups/${id}`).set(auth()).expect(204);
      await getGroup(id).expect(404);
      await http().delete(`/api/admin/groups/${id}`).set(auth()).expect(404);
      const left = await svc.dataSource.query(
        `SELECT (SELECT count(*) FROM group_bindings WHERE group_id = $1)::int AS b,
                (SELECT count(*) FROM group_members WHERE group_id = $1)::int AS m`,
        [id],
      );
      expect(left[0]).toEqual({ b: 0, m: 0 });
      // The name is free again.
      await createGroup('to-delete').expect(201);
    });

    it.each(['999999', 'abc', '1e3', '-1', '0', '99999999999999999999'])(
      'answers 404 for group %s',
      async (id) => {
        const res = await getGroup(id).expect(404);
        expect(res.body).toEqual({ status: 404, error: 'Not Found', message: `Group ${id} not found` });
        await http().delete(`/api/admin/groups/${id}`).set(auth()).expect(404);
        await putBindings(id, []).expect(404);
        await member('put', id, 1).expect(404);
        await member('delete', id, 1).expect(404);
      },
    );
  });

  describe('PUT /api/admin/groups/{id}/bindings', () => {
    it('replaces all bindings at once and returns the group', async () => {
      const id = await newGroup('bindings');
      const first = await putBindings(id, [
        { projectId: p2, role: 'REPORTER' },
        { projectId: p1, role: 'VIEWER' },
      ]).expect(200);
      expect(first.body).toEqual({
        id,
        name: 'bindings',
        bindings: [
          { projectId: p1, role: 'VIEWER' },
          { projectId: p2, role: 'REPORTER' },
        ],
        memberCount: 0,
      });
      const second = await putBindings(id, [
        { projectId: p2, role: 'OWNER' },
        { projectId: p3, role: 'MAINTAINER' },
      ]).expect(200);
      expect(second.body.bindings).toEqual([
        { projectId: p2, role: 'OWNER' },
        { projectId: p3, role: 'MAINTAINER' },
      ]);
      expect((await getGroup(id).expect(200)).body.bindings).toEqual(second.body.bindings);

      const events = await groupEvents(id, 3);
      expect(events[2].details).toEqual({
        action: 'BINDINGS_REPLACED',
        name: 'bindings',
        added: [{ projectId: p3, role: 'MAINTAINER' }],
        removed: [{ projectId: p1, role: 'VIEWER' }],
        changed: [{ projectId: p2, from: 'REPORTER', to: 'OWNER' }],
      });

      const cleared = await putBindings(id, []).expect(200);
      expect(cleared.body.bindings).toEqual([]);
    });

    describe('refuses invalid bindings and changes nothing', () => {
      let id: number;
      let current: { projectId: number; role: string }[];

      beforeAll(async () => {
        id = await newGroup('stable');
        current = [
          { projectId: p1, role: 'VIEWER' },
          { projectId: p2, role: 'OWNER' },
        ];
        await putBindings(id, current).expect(200);
      });

      it.each([
        [
          'an unknown project',
          () => [
            { projectId: p1, role: 'OWNER' },
            { projectId: 987654, role: 'VIEWER' },
          ],
          /\[1\]\.projectId: project 987654 does not exist; nothing was changed/,
        ],
        [
          'a bad role',
          () => [{ projectId: p1, role: 'ADMIN' }],
          /\[0\]\.role must be one of: VIEWER, REPORTER, MAINTAINER, OWNER/,
        ],
        ['a lower-case role', () => [{ projectId: p1, role: 'viewer' }], /\[0\]\.role/],
        [
          'a duplicate projectId',
          () => [
            { projectId: p3, role: 'VIEWER' },
            { projectId: p1, role: 'VIEWER' },
            { projectId: p3, role: 'OWNER' },
          ],
          /\[2\]\.projectId .* \[0\]/,
        ],
        [
          'an unknown field',
          () => [{ projectId: p1, role: 'VIEWER', groupId: 1 }],
          /\[0\]\.groupId.*should not exist/,
        ],
        ['an id beyond 2^53', () => [{ projectId: 2 ** 53, role: 'VIEWER' }], /\[0\]\.projectId/],
        [
          'a string projectId',
          () => [{ projectId: String(p1), role: 'VIEWER' }],
          /^\[0\]\.projectId must be a positive integer$/,
        ],
        [
          'a zero projectId',
          () => [{ projectId: 0, role: 'VIEWER' }],
          /\[0\]\.projectId must be a positive integer/,
        ],
        ['a fractional projectId', () => [{ projectId: 1.5, role: 'VIEWER' }], /\[0\]\.projectId/],
        ['a missing role', () => [{ projectId: p1 }], /\[0\]\.role/],
        ['a null item', () => [null], /\[0\] must be an object/],
        [
          'a JSON string item',
          () => [JSON.stringify({ projectId: p1, role: 'VIEWER' })],
          /\[0\] must be an object/,
        ],
        ['an object body', () => ({ projectId: p1, role: 'VIEWER' }), /must be a JSON array/],
        [
          'more than 1000 items',
          () => Array.from({ length: 1001 }, (_, i) => ({ projectId: i + 1, role: 'VIEWER' })),
          /At most 1000/,
        ],
      ])('%s', async (_what, body, message) => {
        const res = await putBindings(id, body()).expect(400);
        expect(res.body).toEqual({
          status: 400,
          error: 'Bad Request',
          message: expect.stringMatching(message),
        });
        expect((await getGroup(id).expect(200)).body.bindings).toEqual(current);
      });

      it('names every invalid item', async () => {
        const res = await putBindings(id, [
          { projectId: p1, role: 'VIEWER' },
          { projectId: -1, role: 'VIEWER' },
          { projectId: p2, role: 'KING' },
        ]).expect(400);
        expect(res.body.message).toMatch(/\[1\]\.projectId/);
        expect(res.body.message).toMatch(/\[2\]\.role/);
        expect(res.body.message).not.toMatch(/\[0\]/);
      });
    });
  });

  describe('members', () => {
    it('adds and removes manual memberships idempotently', async () => {
      const id = await newGroup('members');
      const [ann, ben] = [await insertUser(svc.dataSource), await insertUser(svc.dataSource)];
      await member('put', id, ann.id).expect(204);
      await member('put', id, ann.id).expect(204);
      await member('put', id, ben.id).expect(204);
      expect((await getGroup(id).expect(200)).body.memberCount).toBe(2);

      await member('delete', id, ben.id).expect(204);
      await member('delete', id, ben.id).expect(204);
      expect((await getGroup(id).expect(200)).body.memberCount).toBe(1);

      const events = await groupEvents(id, 4);
      expect(events.map((e) => e.details.action)).toEqual([
        'CREATED',
        'MEMBER_ADDED',
        'MEMBER_ADDED',
        'MEMBER_REMOVED',
      ]);
      expect(events[1].details).toEqual({
        action: 'MEMBER_ADDED',
        name: 'members',
        userId: Number(ann.id),
        email: ann.email,
      });
    });

    it('counts a user with a manual and a directory membership once and leaves directory memberships alone', async () => {
      const id = await newGroup('directory');
      const user = await insertUser(svc.dataSource);
      await svc.dataSource
        .getRepository(GroupMemberEntity)
        .insert({ groupId: String(id), userId: user.id, source: 'DIRECTORY' });
      await member('put', id, user.id).expect(204);
      expect((await getGroup(id).expect(200)).body.memberCount).toBe(1);
      const sources = async () =>
        (
          await svc.dataSource
            .getRepository(GroupMemberEntity)
            .find({ where: { groupId: String(id) }, order: { source: 'ASC' } })
        ).map((m) => m.source);
      expect(await sources()).toEqual(['DIRECTORY', 'MANUAL']);

      await member('delete', id, user.id).expect(204);
      expect(await sources()).toEqual(['DIRECTORY']);
      expect((await getGroup(id).expect(200)).body.memberCount).toBe(1);
    });

    it.each(['999999', 'abc', '0', '99999999999999999999'])('answers 404 for user %s', async (userId) => {
      const id = await newGroup(`unknown-user-${userId}`);
      const res = await member('put', id, userId).expect(404);
      expect(res.body).toEqual({ status: 404, error: 'Not Found', message: `User ${userId} not found` });
      await member('delete', id, userId).expect(404);
    });
  });
});
