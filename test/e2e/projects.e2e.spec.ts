import { createHash } from 'node:crypto';
import request from 'supertest';
import { GroupBindingEntity, GroupEntity, GroupMemberEntity, InvitationEntity, ProjectMemberEntity } from '../../src/access/entities.js';
import { PROJECT_ROLES, ProjectRole } from '../../src/access/roles.js';
import { AuditEventEntity } from '../../src/audit/audit-event.entity.js';
import { insertUser } from '../factories/user.factory.js';
import { RunningApp, TestDeployment } from '../support/app.js';
import { eventually, login } from '../support/http.js';

interface Actor {
  id: string;
  email: string;
  jwt: string;
  apiToken: string;
}

describe('Projects, memberships and per-project roles', () => {
  const deployment = new TestDeployment();
  let svc: RunningApp;
  let owner: Actor;
  let stranger: Actor;
  let admin: Actor;
  const byRole = {} as Record<ProjectRole, Actor>;
  let projectId: number;
  let otherProjectId: number;

  async function actor(admin = false): Promise<Actor> {
    const user = await insertUser(svc.dataSource, { admin });
    const jwt = (await login(svc.url, user.email, user.password)).accessToken;
    const token = await request(svc.url).post('/api/users/me/api-keys').set('Authorization', `Bearer ${jwt}`).send({ name: 'ci' }).expect(201);
    return { id: user.id, email: user.email, jwt, apiToken: token.body.token };
  }

  const as = (who: Actor, how: 'jwt' | 'apiToken' = 'jwt') => ({
    get: (path: string) => request(svc.url).get(path).set('Authorization', `Bearer ${who[how]}`),
    post: (path: string, body: object) => request(svc.url).post(path).set('Authorization', `Bearer ${who[how]}`).send(body),
    put: (path: string, body: object) => request(svc.url).put(path).set('Authorization', `Bearer ${who[how]}`).send(body),
    patch: (path: string, body: object) => request(svc.url).patch(path).set('Authorization', `Bearer ${who[how]}`).send(body),
    delete: (path: string) => request(svc.url).delete(path).set('Authorization', `Bearer ${who[how]}`),
  });

  beforeAll(async () => {
    [svc] = await deployment.start();
    owner = await actor();
    stranger = await actor();
    admin = await actor(true);
    const created = await as(owner).post('/api/projects', { key: 'WEB', name: 'Web', description: 'web tests' }).expect(201);
    projectId = created.body.id;
    otherProjectId = (await as(stranger).post('/api/projects', { key: 'OTHER', name: 'Other' }).expect(201)).body.id;
    for (const role of PROJECT_ROLES) {
      byRole[role] = role === 'OWNER' ? owner : await actor();
      if (role !== 'OWNER') {
        await as(owner).put(`/api/projects/${projectId}/members/${byRole[role].id}`, { role }).expect(200);
      }
    }
  });
  afterAll(() => deployment.stop());

  it('creates a project with its creator as OWNER', async () => {
    const res = await as(owner).get(`/api/projects/${projectId}`).expect(200);
    expect(res.body).toEqual({
      id: projectId,
      key: 'WEB',
      name: 'Web',
      description: 'web tests',
      role: 'OWNER',
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
      latestRun: null,
    });
  });

  it.each([
    [{ key: 'web', name: 'x' }, /key/],
    [{ key: 'A', name: 'x' }, /key/],
    [{ key: 'WEB2' }, /name/],
    [{ key: 'WEB3', name: 'x', owner: 1 }, /owner/],
  ])('validates a new project %j', async (body, message) => {
    expect((await as(owner).post('/api/projects', body).expect(400)).body.message).toMatch(message);
  });

  // Values the columns could not take come back as a 400 naming the field, not as a database error, and change
  // nothing: 200 × 'a\uFE0F' is 400 characters to PostgreSQL though class-validator's MaxLength counted 200.
  it('refuses names and descriptions it could not store, naming the field', async () => {
    const cases: [object, RegExp][] = [
      [{ name: 'a\uFE0F'.repeat(200) }, /^name must be shorter than or equal to 200 characters$/],
      [{ name: 'x', description: '\uFE0E'.repeat(2001) }, /^description must be shorter than or equal to 2000 characters$/],
      [{ name: 'a\u0000b' }, /^name must not contain NUL characters or unpaired surrogates(; |$)/],
      [{ name: 'x', description: 'lone \ud800' }, /^description must not contain NUL/],
    ];
    for (const [body, message] of cases) {
      const created = await as(owner).post('/api/projects', { key: 'STORABLE', ...body }).expect(400);
      expect(created.body).toEqual({ status: 400, error: 'Bad Request', message: expect.stringMatching(message) });
      const renamed = await as(owner).patch(`/api/projects/${projectId}`, body).expect(400);
      expect(renamed.body.message).toMatch(message);
    }
    expect((await as(owner).get(`/api/projects/${projectId}`).expect(200)).body).toEqual(
      expect.objectContaining({ name: 'Web', description: 'web tests' }),
    );
    // A name may be left out of an update, not set to null; a null description clears it.
    const nameless = await as(owner).patch(`/api/projects/${projectId}`, { name: null }).expect(400);
    expect(nameless.body).toEqual({ status: 400, error: 'Bad Request', message: 'name must be a string' });
    const keys = (await as(owner).get('/api/projects?size=500').expect(200)).body.content.map((p: { key: string }) => p.key);
    expect(keys).not.toContain('STORABLE');
    // The limit is PostgreSQL's: exactly 200 characters, variation selectors included, are stored as sent.
    const fits = 'a\uFE0F'.repeat(100);
    const stored = await as(owner).post('/api/projects', { key: 'STORABLE', name: fits }).expect(201);
    expect(stored.body.name).toBe(fits);
    await as(owner).delete(`/api/projects/${stored.body.id}`).expect(204);
  });

  it('refuses a taken key with 409', async () => {
    const res = await as(stranger).post('/api/projects', { key: 'WEB', name: 'dup' }).expect(409);
    expect(res.body).toEqual({ status: 409, error: 'Conflict', message: expect.stringMatching(/WEB/) });
  });

  // What each kind of endpoint needs, tried by every role, with a JWT and with an API token.
  const ENDPOINTS: [string, ProjectRole, (who: ReturnType<typeof as>) => request.Test][] = [
    ['read the project', 'VIEWER', (c) => c.get(`/api/projects/${projectId}`)],
    ['list members', 'VIEWER', (c) => c.get(`/api/projects/${projectId}/members`)],
    ['invite a viewer', 'MAINTAINER', (c) => c.post(`/api/projects/${projectId}/invitations`, { email: 'new@example.com', role: 'VIEWER' })],
    ['rename the project', 'OWNER', (c) => c.patch(`/api/projects/${projectId}`, { name: 'Web' })],
    ['change a member', 'OWNER', (c) => c.put(`/api/projects/${projectId}/members/${byRole.VIEWER.id}`, { role: 'VIEWER' })],
  ];

  describe.each(['jwt', 'apiToken'] as const)('role matrix with %s', (how) => {
    it.each(ENDPOINTS.flatMap(([what, needed, call]) => PROJECT_ROLES.map((role) => [what, role, needed, call] as const)))(
      '%s as %s',
      async (_what, role, needed, call) => {
        const res = await call(as(byRole[role], how));
        const allowed = PROJECT_ROLES.indexOf(role) >= PROJECT_ROLES.indexOf(needed);
        expect(res.status).toBe(allowed ? (res.status === 202 ? 202 : 200) : 403);
        if (!allowed) {
          expect(res.body.message).toMatch(new RegExp(needed));
        }
      },
    );

    it.each(ENDPOINTS)('%s: a non-member gets 404, never 403', async (_what, _needed, call) => {
      const res = await call(as(stranger, how));
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ status: 404, error: 'Not Found', message: `Project ${projectId} not found` });
    });
  });

  it('lets a platform admin act as OWNER everywhere', async () => {
    expect((await as(admin).get(`/api/projects/${otherProjectId}`).expect(200)).body.role).toBe('OWNER');
    await as(admin, 'apiToken').patch(`/api/projects/${otherProjectId}`, { description: 'by admin' }).expect(200);
    const list = await as(admin).get('/api/projects?size=500').expect(200);
    expect(list.body.content.map((p: { id: number }) => p.id)).toEqual(expect.arrayContaining([projectId, otherProjectId]));
  });

  it('lists only visible projects, each with the caller’s role', async () => {
    const res = await as(byRole.REPORTER).get('/api/projects').expect(200);
    expect(res.body).toEqual({
      content: [expect.objectContaining({ id: projectId, role: 'REPORTER' })],
      page: 0,
      size: 20,
      totalElements: 1,
      totalPages: 1,
    });
    await as(owner).get('/api/projects?sort=secret,asc').expect(400);
    await as(owner).get('/api/projects?size=501').expect(400);
  });

  it('finds a project by its key among those the caller can see', async () => {
    const found = await as(byRole.VIEWER, 'apiToken').get('/api/projects?key=WEB').expect(200);
    expect(found.body).toEqual({
      content: [expect.objectContaining({ id: projectId, key: 'WEB', role: 'VIEWER' })],
      page: 0,
      size: 20,
      totalElements: 1,
      totalPages: 1,
    });
    // Another's project is not leaked, and an unknown key is an empty page, not an error.
    for (const key of ['OTHER', 'NOPE']) {
      const res = await as(owner).get(`/api/projects?key=${key}`).expect(200);
      expect(res.body).toMatchObject({ content: [], totalElements: 0 });
    }
    expect((await as(admin).get('/api/projects?key=OTHER').expect(200)).body.content).toEqual([
      expect.objectContaining({ id: otherProjectId, key: 'OTHER' }),
    ]);
    const bad = await as(owner).get('/api/projects?key=web%25').expect(400);
    expect(bad.body.message).toMatch(/key/);
  });

  it('does not let ids of another project leak through paths (BOLA)', async () => {
    await as(owner).get(`/api/projects/${otherProjectId}`).expect(404);
    await as(owner).get(`/api/projects/${otherProjectId}/members`).expect(404);
    await as(owner).put(`/api/projects/${otherProjectId}/members/${owner.id}`, { role: 'OWNER' }).expect(404);
    await as(owner).delete(`/api/projects/${otherProjectId}`).expect(404);
    await as(owner).get('/api/projects/999999999').expect(404);
    await as(owner).get('/api/projects/abc').expect(404);
    expect((await as(stranger).get(`/api/projects/${otherProjectId}`).expect(200)).body.description).toBe('by admin');
  });

  it('applies a demotion and a removal on the very next request, also for API tokens', async () => {
    const member = await actor();
    await as(owner).put(`/api/projects/${projectId}/members/${member.id}`, { role: 'OWNER' }).expect(200);
    await as(member, 'apiToken').patch(`/api/projects/${projectId}`, { name: 'Web' }).expect(200);
    await as(owner).put(`/api/projects/${projectId}/members/${member.id}`, { role: 'VIEWER' }).expect(200);
    await as(member, 'apiToken').patch(`/api/projects/${projectId}`, { name: 'Web' }).expect(403);
    await as(owner).delete(`/api/projects/${projectId}/members/${member.id}`).expect(204);
    await as(member, 'apiToken').get(`/api/projects/${projectId}`).expect(404);
  });

  it('adds and removes access through group bindings on the next request', async () => {
    const member = await actor();
    const groups = svc.dataSource.getRepository(GroupEntity);
    const group = await groups.save({ name: `QA-${member.id}` });
    await svc.dataSource.getRepository(GroupMemberEntity).insert({ groupId: group.id, userId: member.id, source: 'MANUAL' });
    await as(member).get(`/api/projects/${projectId}`).expect(404);

    const bindings = svc.dataSource.getRepository(GroupBindingEntity);
    await bindings.insert({ groupId: group.id, projectId: String(projectId), role: 'MAINTAINER' });
    expect((await as(member, 'apiToken').get(`/api/projects/${projectId}`).expect(200)).body.role).toBe('MAINTAINER');

    // A direct VIEWER membership does not lower the group's MAINTAINER: the highest role counts.
    await as(owner).put(`/api/projects/${projectId}/members/${member.id}`, { role: 'VIEWER' }).expect(200);
    const members = await as(owner).get(`/api/projects/${projectId}/members?size=100`).expect(200);
    expect(members.body.content).toEqual(
      expect.arrayContaining([
        { userId: Number(member.id), email: member.email, fullName: 'Test User', role: 'MAINTAINER', via: 'GROUP', platformAdmin: false },
      ]),
    );

    await bindings.delete({ groupId: group.id });
    expect((await as(member).get(`/api/projects/${projectId}`).expect(200)).body.role).toBe('VIEWER');
    await as(owner).delete(`/api/projects/${projectId}/members/${member.id}`).expect(204);
    await as(member).get(`/api/projects/${projectId}`).expect(404);
  });

  it('keeps at least one OWNER', async () => {
    const solo = await actor();
    const p = (await as(solo).post('/api/projects', { key: 'SOLO', name: 'Solo' }).expect(201)).body.id;
    const res = await as(solo).put(`/api/projects/${p}/members/${solo.id}`, { role: 'VIEWER' }).expect(409);
    expect(res.body.message).toMatch(/OWNER/);
    await as(solo).delete(`/api/projects/${p}/members/${solo.id}`).expect(409);
  });

  it('validates membership changes', async () => {
    await as(owner).put(`/api/projects/${projectId}/members/${stranger.id}`, { role: 'GOD' }).expect(400);
    await as(owner).put(`/api/projects/${projectId}/members/999999`, { role: 'VIEWER' }).expect(404);
    await as(owner).delete(`/api/projects/${projectId}/members/${stranger.id}`).expect(404);
    await as(owner).get(`/api/projects/${projectId}/members?sort=password,asc`).expect(400);
  });

  it('pages members sorted by role', async () => {
    const res = await as(owner).get(`/api/projects/${projectId}/members?sort=role,desc&size=2`).expect(200);
    expect(res.body.content[0].role).toBe('OWNER');
    expect(res.body.size).toBe(2);
    expect(res.body.totalElements).toBeGreaterThanOrEqual(4);
  });

  it('deletes a project with its memberships (OWNER)', async () => {
    const p = (await as(owner).post('/api/projects', { key: 'GONE', name: 'Gone' }).expect(201)).body.id;
    await as(owner).delete(`/api/projects/${p}`).expect(204);
    await as(owner).get(`/api/projects/${p}`).expect(404);
    expect(await svc.dataSource.getRepository(ProjectMemberEntity).countBy({ projectId: String(p) })).toBe(0);
  });

  describe('invitations', () => {
    // The mail module sends the link; here the token is planted the way it would arrive.
    async function plantToken(email: string): Promise<string> {
      const token = `invite-token-${Math.random().toString(36).slice(2)}-0123456789`;
      const repo = svc.dataSource.getRepository(InvitationEntity);
      const invitation = await eventually(async () => (await repo.findOne({ where: { email }, order: { id: 'DESC' } })) ?? undefined);
      await repo.update({ id: invitation.id }, { tokenHash: createHash('sha256').update(token).digest('hex') });
      return token;
    }

    it('invites to a project and creates the account on acceptance, once', async () => {
      await as(byRole.MAINTAINER).post(`/api/projects/${projectId}/invitations`, { email: 'Grace@Example.com', role: 'REPORTER' }).expect(202);
      const token = await plantToken('grace@example.com');
      const weak = await request(svc.url).post('/api/invitations/accept').send({ token, fullName: 'Grace', password: 'short' }).expect(400);
      expect(weak.body.message).toMatch(/12 characters/);
      // The failed attempt did not use the invitation up.
      const res = await request(svc.url)
        .post('/api/invitations/accept')
        .send({ token, fullName: 'Grace Hopper', password: 'a-good-long-password' })
        .expect(200);
      expect(res.body).toEqual({ userId: expect.any(Number), email: 'grace@example.com', projectId, role: 'REPORTER', accountCreated: true });
      await request(svc.url).post('/api/invitations/accept').send({ token, fullName: 'x', password: 'a-good-long-password' }).expect(400);

      const grace = await login(svc.url, 'grace@example.com', 'a-good-long-password');
      expect((await request(svc.url).get(`/api/projects/${projectId}`).set('Authorization', `Bearer ${grace.accessToken}`).expect(200)).body.role).toBe('REPORTER');
      await eventually(async () =>
        (await svc.dataSource.getRepository(AuditEventEntity).countBy({ type: 'INVITATION_ACCEPTED' })) ? true : undefined,
      );
    });

    it('lets an existing user join without lowering a higher role', async () => {
      await as(owner).post(`/api/projects/${projectId}/invitations`, { email: byRole.MAINTAINER.email, role: 'VIEWER' }).expect(202);
      const token = await plantToken(byRole.MAINTAINER.email);
      const res = await request(svc.url).post('/api/invitations/accept').send({ token }).expect(200);
      expect(res.body).toEqual(expect.objectContaining({ role: 'MAINTAINER', accountCreated: false }));
    });

    it('refuses to invite above the inviter’s own role, and bad addresses', async () => {
      await as(byRole.MAINTAINER).post(`/api/projects/${projectId}/invitations`, { email: 'x@example.com', role: 'OWNER' }).expect(403);
      await as(owner).post(`/api/projects/${projectId}/invitations`, { email: 'x@example.com\r\nBcc: evil@example.com', role: 'VIEWER' }).expect(400);
      await as(owner).post(`/api/projects/${projectId}/invitations`, { email: 'not-an-address', role: 'VIEWER' }).expect(400);
    });

    it('lets only platform admins invite to the workspace', async () => {
      await as(owner).post('/api/workspace/invitations', { email: 'w@example.com' }).expect(403);
      await as(admin).post('/api/workspace/invitations', { email: 'w@example.com' }).expect(202);
      const token = await plantToken('w@example.com');
      const res = await request(svc.url).post('/api/invitations/accept').send({ token, fullName: 'W', password: 'another-long-password' }).expect(200);
      expect(res.body).toEqual(expect.objectContaining({ projectId: null, role: null, accountCreated: true }));
    });

    it('refuses unknown and expired tokens', async () => {
      await request(svc.url).post('/api/invitations/accept').send({ token: 'x'.repeat(40) }).expect(400);
      await as(owner).post(`/api/projects/${projectId}/invitations`, { email: 'late@example.com', role: 'VIEWER' }).expect(202);
      const token = await plantToken('late@example.com');
      await svc.dataSource.getRepository(InvitationEntity).update({ email: 'late@example.com' }, { expiresAt: new Date(Date.now() - 1000) });
      await request(svc.url).post('/api/invitations/accept').send({ token, fullName: 'L', password: 'a-good-long-password' }).expect(400);
    });

    it('refuses an invitation to a project deleted since, making no account and no member', async () => {
      const doomed = (await as(owner).post('/api/projects', { key: 'DOOMED', name: 'Doomed' }).expect(201)).body.id as number;
      await as(owner).post(`/api/projects/${doomed}/invitations`, { email: 'gone@example.com', role: 'VIEWER' }).expect(202);
      const token = await plantToken('gone@example.com');
      await as(owner).delete(`/api/projects/${doomed}`).expect(204);
      const refused = await request(svc.url)
        .post('/api/invitations/accept')
        .send({ token, fullName: 'Gone', password: 'a-good-long-password' })
        .expect(409);
      expect(refused.body.message).toMatch(/project of this invitation was deleted/);
      expect(await svc.dataSource.query(`SELECT 1 FROM users WHERE email = 'gone@example.com'`)).toEqual([]);
      expect(await svc.dataSource.query('SELECT 1 FROM project_members WHERE project_id = $1', [doomed])).toEqual([]);
    });
  });
});
