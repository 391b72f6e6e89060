import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it, vi } from 'vitest';
import type { AdminUser, AuditEvent, GroupMember, Member, Project, ProjectRole } from '../src/api/client';
import { AdminAudit } from '../src/pages/admin/Audit';
import { AdminGroups } from '../src/pages/admin/Groups';
import { ImportReport } from '../src/pages/projects/ImportReport';
import { Members } from '../src/pages/projects/Members';
import { outcomeOf, said, type ActionState } from '../src/ui/outcome';
import { sortInWords } from '../src/ui/url-state';
import { api, json, pageOf, renderAt, requests } from './support';

const project = (role: ProjectRole): Project => ({ id: 7, key: 'WEB', name: 'Web shop', role });

/** An action's state as TanStack Query has it. */
const action = <D, V>(state: Partial<ActionState<D, V>>): ActionState<D, V> => ({
  status: 'idle',
  submittedAt: 0,
  error: null,
  data: undefined,
  variables: undefined,
  ...state,
});

describe('outcomeOf (one outcome a page, that of its latest action)', () => {
  const ok = action<string, string>({ status: 'success', submittedAt: 100, data: 'x', variables: 'Ada' });
  const say = (_: string, who: string) => `${who} was added.`;

  it('says a success in words', () => {
    const outcome = outcomeOf({ add: said(ok, say), remove: said(action({})) });
    expect(outcome).toMatchObject({ latest: 'add', notice: 'Ada was added.', error: undefined });
  });

  it('drops the success notice once a later action fails, or while one runs', () => {
    const failed = action({ status: 'error', submittedAt: 200, error: new Error('refused') });
    const failing = outcomeOf({ add: said(ok, say), remove: said(failed) });
    expect(failing).toMatchObject({ latest: 'remove', notice: undefined });
    expect(failing.errorOf('remove')).toEqual(new Error('refused'));
    expect(failing.errorOf('add')).toBeUndefined();
    const running = outcomeOf({
      add: said(ok, say),
      remove: said(action({ status: 'pending', submittedAt: 200 })),
    });
    expect(running).toMatchObject({ latest: 'remove', pending: true, notice: undefined, error: undefined });
  });

  it('drops an old error once a later action succeeds, and counts a tie against the success', () => {
    const oldError = action({ status: 'error', submittedAt: 50, error: new Error('old') });
    expect(outcomeOf({ remove: said(oldError), add: said(ok, say) })).toMatchObject({
      latest: 'add',
      error: undefined,
      notice: 'Ada was added.',
    });
    const tie = action({ status: 'error', submittedAt: 100, error: new Error('same moment') });
    expect(outcomeOf({ add: said(ok, say), remove: said(tie) }).latest).toBe('remove');
    expect(outcomeOf({ remove: said(tie), add: said(ok, say) }).latest).toBe('remove');
  });
});

describe('sortInWords', () => {
  const columns = [
    { field: 'name', label: 'Test' },
    { field: 'durationMs', label: 'Duration' },
  ];
  it("names a sort by the column's label, never the API's field", () => {
    expect(sortInWords('durationMs,desc', columns)).toBe('by Duration descending');
    expect(sortInWords('name,asc', columns)).toBe('by Test ascending');
    expect(sortInWords('', columns)).toBe('');
  });
});

describe('The import page', () => {
  it('tells a VIEWER the role it takes, naming the project, and shows no form', async () => {
    const fetchImpl = api({ '/api/projects/7': () => project('VIEWER') });
    renderAt('/projects/7/import', '/projects/:projectId/import', <ImportReport />, fetchImpl);
    expect(await screen.findByRole('heading', { name: 'Import a report into Web shop' })).toBeTruthy();
    expect(screen.getByText(/You need the Reporter role to import reports into Web shop/)).toBeTruthy();
    expect(screen.queryByRole('form')).toBeNull();
    expect(screen.queryByLabelText(/Drop a report here/)).toBeNull();
    expect(screen.queryByRole('button', { name: 'Import' })).toBeNull();
    expect(document.title).toMatch(/^Import a report into Web shop/);
  });

  it.each(['REPORTER', 'OWNER'] as const)("shows a %s the form under the project's name", async (role) => {
    const fetchImpl = api({ '/api/projects/7': () => project(role) });
    renderAt('/projects/7/import', '/projects/:projectId/import', <ImportReport />, fetchImpl);
    expect(await screen.findByRole('form', { name: 'Import a report into Web shop' })).toBeTruthy();
    expect(screen.getByLabelText(/Drop a report here/)).toBeTruthy();
    expect(screen.queryByText(/You need the Reporter role/)).toBeNull();
  });

  it('says why when the project cannot be read', async () => {
    const fetchImpl = api({
      '/api/projects/7': () => json(404, { status: 404, error: 'Not Found', message: 'Project 7 not found' }),
    });
    renderAt('/projects/7/import', '/projects/:projectId/import', <ImportReport />, fetchImpl);
    expect((await screen.findByRole('alert')).textContent).toBe('Project 7 not found');
    expect(screen.queryByRole('form')).toBeNull();
  });
});

describe("A project's members page", () => {
  it('takes a success notice away when the next action fails', async () => {
    const ada: Member = {
      userId: 2,
      email: 'ada@example.com',
      fullName: 'Ada',
      role: 'VIEWER',
      via: 'DIRECT',
    };
    const fetchImpl = api({
      '/api/auth/me': () => ({ id: 1, email: 'o@example.com', fullName: 'Owner', admin: false }),
      '/api/projects/7': () => project('OWNER'),
      '/api/projects/7/members': () => pageOf([ada]),
      'PUT /api/projects/7/members/2': () => ({ ...ada, role: 'REPORTER' }),
      'DELETE /api/projects/7/members/2': () =>
        json(409, { status: 409, error: 'Conflict', message: 'A project keeps at least one OWNER' }),
    });
    vi.spyOn(window, 'confirm').mockReturnValue(true);
    renderAt('/projects/7/members', '/projects/:projectId/members', <Members />, fetchImpl);
    const user = userEvent.setup();
    await user.selectOptions(await screen.findByLabelText('Role of ada@example.com'), 'REPORTER');
    expect((await screen.findByRole('status')).textContent).toBe('Ada is now reporter.');
    await user.click(screen.getByRole('button', { name: /^Remove\s*ada@example.com$/ }));
    expect((await screen.findByRole('alert')).textContent).toBe('A project keeps at least one OWNER');
    expect(screen.queryByText('Ada is now reporter.')).toBeNull();
  });
});

describe('Admin → Groups', () => {
  const ada: AdminUser = {
    id: 42,
    email: 'ada@example.com',
    fullName: 'Ada Lovelace',
    admin: false,
    enabled: true,
    authSource: 'LOCAL',
    createdAt: '2026-11-01T00:00:00.000Z',
  };

  it('finds people by name, shows name and email, and adds the one picked by id', async () => {
    const members: GroupMember[] = [];
    const fetchImpl = api({
      '/api/admin/groups': () => pageOf([{ id: 3, name: 'QA-Team', memberCount: 0 }]),
      '/api/admin/groups/3': () => ({ id: 3, name: 'QA-Team', bindings: [], memberCount: members.length }),
      '/api/admin/groups/3/members': () => pageOf(members),
      '/api/projects': () => pageOf([]),
      '/api/admin/users': (url) => pageOf(url.searchParams.get('q') === 'love' ? [ada] : []),
      'PUT /api/admin/groups/3/members/42': () => {
        members.push({ userId: 42, email: ada.email, fullName: ada.fullName, source: 'MANUAL' });
        return json(204);
      },
    });
    renderAt('/admin/groups', '/admin/groups', <AdminGroups />, fetchImpl);
    const user = userEvent.setup();
    await user.click(await screen.findByRole('button', { name: 'QA-Team' }));
    expect(await screen.findByText(/No members yet/)).toBeTruthy();

    await user.type(screen.getByLabelText('Find by name or email'), 'nobody');
    expect(await screen.findByText('No user matches “nobody”.')).toBeTruthy();
    await user.clear(screen.getByLabelText('Find by name or email'));
    await user.type(screen.getByLabelText('Find by name or email'), 'love');
    const matches = await screen.findByRole('list', { name: 'People matching “love”' });
    expect(within(matches).getByText('Ada Lovelace', { selector: '.person > span' })).toBeTruthy();
    expect(within(matches).getByText('ada@example.com')).toBeTruthy();
    // By keyboard: Tab from the search box reaches the match's button.
    await user.tab();
    expect(document.activeElement).toBe(
      within(matches).getByRole('button', { name: /^Add\s*Ada Lovelace$/ }),
    );
    await user.keyboard('{Enter}');

    expect(requests(fetchImpl, 'PUT', '/api/admin/groups/3/members/42')).toHaveLength(1);
    expect((await screen.findByRole('status')).textContent).toBe('Ada Lovelace (ada@example.com) was added.');
    const list = await screen.findByRole('list', { name: 'Members of QA-Team' });
    expect(within(list).getByText('Ada Lovelace', { selector: '.person > span' })).toBeTruthy();
    expect(within(list).getByText('ada@example.com')).toBeTruthy();
    await waitFor(() => expect(within(matches).getByText('a member')).toBeTruthy());
  });
});

describe('Admin → Audit', () => {
  it("shows the actor's email and the project's name, not ids", async () => {
    const event = (e: Partial<AuditEvent>): AuditEvent => ({
      id: 1,
      at: '2026-11-26T10:00:00.000Z',
      type: 'PROJECT_CREATED',
      actorId: 1,
      actorEmail: 'admin@tms.local',
      ip: '127.0.0.1',
      target: 'project:1',
      targetLabel: 'Web shop',
      details: { key: 'WEB' },
      ...e,
    });
    const fetchImpl = api({
      '/api/admin/audit': () =>
        pageOf([
          event({}),
          event({ id: 2, type: 'PROJECT_DELETED', target: 'project:2', targetLabel: 'project #2 (deleted)' }),
          event({
            id: 4,
            type: 'PROJECT_SETTINGS_CHANGED',
            details: { changed: { gate: { enabled: true, maxFailed: 0 } } },
          }),
          event({
            id: 3,
            type: 'LOGIN_FAILURE',
            actorEmail: null,
            actorId: 9,
            target: null,
            targetLabel: null,
          }),
        ]),
    });
    renderAt('/admin/audit', '/admin/audit', <AdminAudit />, fetchImpl);
    expect(await screen.findByRole('cell', { name: 'project Web shop · key: WEB' })).toBeTruthy();
    expect(screen.getByRole('cell', { name: 'project #2 (deleted) · key: WEB' })).toBeTruthy();
    expect(screen.getAllByRole('cell', { name: 'admin@tms.local' })).toHaveLength(3);
    expect(screen.getByRole('cell', { name: 'user #9' })).toBeTruthy();
    expect(screen.queryByText(/project:1/)).toBeNull();
    // An object's value with spaces to wrap at, not one unbroken run of JSON.
    expect(
      screen.getByRole('cell', {
        name: 'project Web shop · changed: { "gate": { "enabled": true, "maxFailed": 0 } }',
      }),
    ).toBeTruthy();
  });
});
