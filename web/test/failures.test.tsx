import { act, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import type { FailureGroup, ProjectRole, Signature, SignatureDetail } from '../src/api/client';
import { FailureDetail } from '../src/pages/projects/failures/FailureDetail';
import { FailuresPage } from '../src/pages/projects/failures/FailuresPage';
import { FailureGroups } from '../src/pages/projects/RunPage';
import { api, calls, json, pageOf, renderAt, requests, where } from './support';

const SCRIPT = '<script>alert("x")</script> expected <b>200</b> but was <img src=x onerror=alert(1)>';

const signature = (id: number, changes: Partial<Signature> = {}): Signature => ({
  id,
  projectId: 1,
  key: `AssertionError: expected <n> but was <n> #${id}`,
  sampleMessage: `AssertionError: expected 200 but was 500 (#${id})`,
  firstSeen: { runId: 10, at: '2026-11-20T08:00:00.000Z' },
  lastSeen: { runId: 14, at: '2026-11-25T09:30:00.000Z' },
  occurrences: 42,
  tests: 3,
  runs: 5,
  triage: 'TO_INVESTIGATE',
  issue: null,
  note: null,
  assignee: null,
  suggested: null,
  ...changes,
});

const detail = (id: number, changes: Partial<SignatureDetail> = {}): SignatureDetail => ({
  ...signature(id),
  recentRuns: [
    { runId: 14, name: 'nightly #14', at: '2026-11-25T09:30:00.000Z', count: 2 },
    { runId: 12, name: 'nightly #12', at: '2026-11-23T09:30:00.000Z', count: 1 },
  ],
  topTests: [{ testId: 7, suite: 'Checkout', name: 'pays by card', count: 30 }],
  ...changes,
});

const project = (role: ProjectRole) => () => ({ id: 1, key: 'SHOP', name: 'Shop', role, latestRun: null });
const ME = { id: 3, email: 'me@example.com', fullName: 'Mia Me', admin: false };

/** Types `text` into `field` at once (pasted): as a person would, the form sees a change, not 40 of them. */
async function fill(user: ReturnType<typeof userEvent.setup>, field: HTMLElement, text: string) {
  await user.click(field);
  await user.paste(text);
}

/** Every answer of the fake API taken in and rendered: the fetches resolve in macrotasks of their own. */
const settled = async () => {
  for (let i = 0; i < 5; i++) {
    await act(() => new Promise((resolve) => setTimeout(resolve, 0)));
  }
};

/** The bodies of the PATCHes of failure `id`, in order. */
const patched = (fetchImpl: ReturnType<typeof api>, id: number): unknown[] =>
  requests(fetchImpl, 'PATCH', `/api/failures/${id}`).map(
    ([, init]) => JSON.parse(String(init?.body)) as unknown,
  );

describe('The Failures page', () => {
  const routes = (list: () => unknown) => ({
    '/api/projects/1': project('REPORTER'),
    '/api/projects/1/failures': list,
  });

  it('reads its filters, search, sort and page from the URL and puts every change back there', async () => {
    const fetchImpl = api(routes(() => pageOf([signature(1)], 1, 20, 45)));
    renderAt(
      '/projects/1/failures?q=timeout&triage=PRODUCT_BUG&sort=occurrences%2Cdesc&page=1',
      '/projects/:projectId/failures',
      <FailuresPage />,
      fetchImpl,
    );
    await screen.findByTestId('failure-1');
    expect(Object.fromEntries(calls(fetchImpl, '/api/projects/1/failures')[0].searchParams)).toEqual({
      q: 'timeout',
      triage: 'PRODUCT_BUG',
      sort: 'occurrences,desc',
      page: '1',
      size: '20',
    });
    expect((screen.getByLabelText('Search messages') as HTMLInputElement).value).toBe('timeout');
    expect((screen.getByLabelText('Triage') as HTMLSelectElement).value).toBe('PRODUCT_BUG');
    expect(screen.getByText('Page 2 of 3')).toBeTruthy();
    expect(screen.getByText('45 causes of failure')).toBeTruthy();
    await userEvent.setup().click(screen.getByRole('button', { name: 'Next' }));
    expect(where()).toBe('?q=timeout&triage=PRODUCT_BUG&sort=occurrences%2Cdesc&page=2');
  });

  it('puts each filter, the sort and the search in the URL, a new one on page one', async () => {
    const fetchImpl = api(routes(() => pageOf([signature(1)], 1, 20, 45)));
    renderAt(
      '/projects/1/failures?q=timeout&triage=PRODUCT_BUG&sort=occurrences%2Cdesc&page=1',
      '/projects/:projectId/failures',
      <FailuresPage />,
      fetchImpl,
    );
    await screen.findByTestId('failure-1');
    const user = userEvent.setup();
    await user.click(screen.getByRole('button', { name: 'Next' }));
    expect(where()).toBe('?q=timeout&triage=PRODUCT_BUG&sort=occurrences%2Cdesc&page=2');
    // Untriaged is a triage of its own: it replaces the one picked, and back to page one.
    await user.click(screen.getByRole('button', { name: 'Untriaged' }));
    expect(where()).toBe('?q=timeout&triage=TO_INVESTIGATE&sort=occurrences%2Cdesc');
    expect(screen.getByRole('button', { name: 'Untriaged' }).getAttribute('aria-pressed')).toBe('true');
    await user.click(screen.getByRole('button', { name: 'New' }));
    expect(where()).toBe('?q=timeout&triage=TO_INVESTIGATE&sort=occurrences%2Cdesc&new=true');
    await user.selectOptions(screen.getByLabelText('Triage'), 'SYSTEM_ISSUE');
    expect(where()).toContain('triage=SYSTEM_ISSUE');
    expect(screen.getByRole('button', { name: 'Untriaged' }).getAttribute('aria-pressed')).toBe('false');
    // The default sort leaves the URL.
    await user.selectOptions(screen.getByLabelText('Sort by'), 'lastSeen,desc');
    expect(where()).toBe('?q=timeout&triage=SYSTEM_ISSUE&new=true');
    await user.selectOptions(screen.getByLabelText('Sort by'), 'firstSeen,asc');
    expect(where()).toContain('sort=firstSeen%2Casc');
    await user.clear(screen.getByLabelText('Search messages'));
    await fill(user, screen.getByLabelText('Search messages'), 'NullPointer');
    await waitFor(() => expect(where()).toContain('q=NullPointer'));
    await waitFor(() =>
      expect(Object.fromEntries(calls(fetchImpl, '/api/projects/1/failures').at(-1)!.searchParams)).toEqual({
        q: 'NullPointer',
        new: 'true',
        triage: 'SYSTEM_ISSUE',
        sort: 'firstSeen,asc',
        page: '0',
        size: '20',
      }),
    );
  });

  it('shows the failures assigned to me in one click, and all of them again in another', async () => {
    const fetchImpl = api(routes(() => pageOf([signature(1)])));
    renderAt('/projects/1/failures', '/projects/:projectId/failures', <FailuresPage />, fetchImpl);
    await screen.findByTestId('failure-1');
    // The default order asked for explicitly.
    expect(calls(fetchImpl, '/api/projects/1/failures')[0].searchParams.get('sort')).toBe('lastSeen,desc');
    const user = userEvent.setup();
    await user.click(screen.getByRole('button', { name: 'Assigned to me' }));
    expect(where()).toBe('?assignee=me');
    await waitFor(() =>
      expect(calls(fetchImpl, '/api/projects/1/failures').at(-1)!.searchParams.get('assignee')).toBe('me'),
    );
    expect(screen.getByRole('button', { name: 'Assigned to me' }).getAttribute('aria-pressed')).toBe('true');
    await user.click(screen.getByRole('button', { name: 'Assigned to me' }));
    expect(where()).toBe('');
  });

  it('shows each cause: its message as text, counts, when seen, triage, a suggestion as one, the issue in a new tab', async () => {
    const long = `${'Timed out waiting for the payment frame. '.repeat(8)}\n\tat Checkout.pay(Checkout.java:42)`;
    const fetchImpl = api(
      routes(() =>
        pageOf([
          signature(1, {
            sampleMessage: SCRIPT,
            triage: 'PRODUCT_BUG',
            issue: { url: 'https://jira.example.com/browse/SHOP-12', key: 'SHOP-12', title: 'Payments 500' },
            assignee: { id: 4, email: 'ann@example.com', fullName: 'Ann Lee' },
          }),
          signature(2, {
            sampleMessage: long,
            triage: 'AUTOMATION_BUG',
            suggested: { fromId: 1, similarity: 0.874 },
            issue: { url: 'https://github.com/acme/shop/issues/9' },
          }),
          signature(3, { issue: { url: 'javascript:alert(1)', key: 'EVIL-1' } }),
        ]),
      ),
    );
    renderAt('/projects/1/failures', '/projects/:projectId/failures', <FailuresPage />, fetchImpl);
    const first = within(await screen.findByTestId('failure-1'));
    // A message with markup in it is text: no element of it reaches the document.
    expect(first.getByText(SCRIPT).tagName).toBe('CODE');
    expect(document.querySelector('main script, main img, main b')).toBeNull();
    expect(first.getByRole('link', { name: SCRIPT }).getAttribute('href')).toBe('/projects/1/failures/1');
    const issue = first.getByRole('link', { name: /^SHOP-12/ });
    expect(issue.getAttribute('href')).toBe('https://jira.example.com/browse/SHOP-12');
    expect(issue.getAttribute('target')).toBe('_blank');
    expect(issue.getAttribute('rel')).toBe('noopener noreferrer');
    expect(issue.getAttribute('title')).toBe('Payments 500 (https://jira.example.com/browse/SHOP-12)');
    expect(first.getByText('Product bug')).toBeTruthy();
    expect(first.queryByText(/suggested/)).toBeNull();
    expect(first.getByText(/Ann Lee/).textContent).toBe('assigned to → Ann Lee');
    expect(first.getByText('42')).toBeTruthy();
    // When, relative, the exact time in its tooltip; a link to the run.
    const last = first.getAllByRole('link').find((a) => a.getAttribute('href') === '/runs/14')!;
    expect(last.querySelector('time')!.getAttribute('title')).toBe(
      new Date('2026-11-25T09:30:00.000Z').toLocaleString(),
    );

    const second = within(screen.getByTestId('failure-2'));
    const badge = second.getByText('Automation bug');
    expect(badge.textContent).toBe('Automation bug · suggested');
    expect(badge.getAttribute('title')).toBe('Suggested from failure #1, 87% similar: not confirmed yet');
    // No key: the host it is on.
    expect(second.getByRole('link', { name: /^github\.com/ }).getAttribute('rel')).toBe(
      'noopener noreferrer',
    );
    // A long message: three lines, the rest a click away.
    const expand = second.getByRole('button', { name: 'Show all of the message' });
    expect(expand.getAttribute('aria-expanded')).toBe('false');
    expect(second.getByText(/Timed out waiting/).className).toBe('message-text clamped');
    await userEvent.setup().click(expand);
    expect(second.getByText(/Timed out waiting/).className).toBe('message-text');
    expect(second.getByRole('button', { name: 'Show less of the message' })).toBeTruthy();
    expect(within(screen.getByTestId('failure-1')).queryByRole('button', { name: /Show all/ })).toBeNull();

    // Only http(s) becomes a link, whatever the service sent.
    const third = within(screen.getByTestId('failure-3'));
    expect(third.getByText('EVIL-1').tagName).toBe('SPAN');
    expect(document.querySelector('a[href^="javascript"]')).toBeNull();
  });

  it('says so while it loads', async () => {
    const fetchImpl = api(routes(() => new Promise(() => undefined)));
    renderAt('/projects/1/failures', '/projects/:projectId/failures', <FailuresPage />, fetchImpl);
    expect(await screen.findByText(/Loading failures/)).toBeTruthy();
  });

  it('says so when the project has no failures', async () => {
    const fetchImpl = api(routes(() => pageOf([])));
    renderAt('/projects/1/failures', '/projects/:projectId/failures', <FailuresPage />, fetchImpl);
    expect(await screen.findByText(/No failures yet/)).toBeTruthy();
  });

  it('offers to clear the filters when none match', async () => {
    const fetchImpl = api(routes(() => pageOf([])));
    renderAt(
      '/projects/1/failures?new=true&q=x',
      '/projects/:projectId/failures',
      <FailuresPage />,
      fetchImpl,
    );
    expect(await screen.findByText(/No failures match these filters/)).toBeTruthy();
    await userEvent.setup().click(screen.getByRole('button', { name: 'Clear the filters' }));
    expect(where()).toBe('');
  });

  it("shows the API's message when the list fails", async () => {
    const fetchImpl = api(
      routes(() =>
        json(400, { status: 400, error: 'Bad Request', message: 'triage must be one of TO_INVESTIGATE, …' }),
      ),
    );
    renderAt(
      '/projects/1/failures?triage=NOPE',
      '/projects/:projectId/failures',
      <FailuresPage />,
      fetchImpl,
    );
    expect((await screen.findByRole('alert')).textContent).toBe('triage must be one of TO_INVESTIGATE, …');
  });
});

describe("A failure's page", () => {
  const routes = (
    role: ProjectRole,
    failure: () => unknown,
    extra: Record<string, (url: URL) => unknown> = {},
  ) => ({
    '/api/projects/1': project(role),
    '/api/auth/me': () => ME,
    '/api/failures/5': failure,
    '/api/failures/5/similar': () => [
      {
        signature: signature(6, { sampleMessage: 'expected 200 but was 502', triage: 'PRODUCT_BUG' }),
        similarity: 0.91,
      },
      { signature: signature(8, { sampleMessage: 'expected 201 but was 500' }), similarity: 0.4 },
    ],
    '/api/projects/1/members': () =>
      pageOf([
        { userId: 3, email: 'me@example.com', fullName: 'Mia Me', role: 'REPORTER', via: 'DIRECT' },
        { userId: 4, email: 'ann@example.com', fullName: 'Ann Lee', role: 'VIEWER', via: 'DIRECT' },
        { userId: 4, email: 'ann@example.com', fullName: 'Ann Lee', role: 'MAINTAINER', via: 'GROUP' },
      ]),
    ...extra,
  });
  const at = '/projects/1/failures/5';
  const pattern = '/projects/:projectId/failures/:failureId';

  it('shows its message, key, history, the runs and tests it was seen in, and the signatures like it', async () => {
    const fetchImpl = api(
      routes('VIEWER', () => detail(5, { sampleMessage: SCRIPT, note: '<b>not bold</b>\nsecond line' })),
    );
    renderAt(at, pattern, <FailureDetail />, fetchImpl);
    expect(await screen.findByRole('heading', { level: 1, name: 'Failure #5' })).toBeTruthy();
    expect(screen.getByText(SCRIPT).tagName).toBe('CODE');
    expect(screen.getByText('AssertionError: expected <n> but was <n> #5')).toBeTruthy();
    expect(document.querySelector('main script, main img, main b')).toBeNull();
    expect(screen.getByText('<b>not bold</b>\nsecond line', { normalizer: (s) => s }).tagName).toBe('P');
    const runs = within(screen.getByRole('region', { name: 'Recent runs' }));
    expect(runs.getByRole('link', { name: 'nightly #14' }).getAttribute('href')).toBe('/runs/14');
    expect(runs.getByText(/2 occurrences/)).toBeTruthy();
    const tests = within(screen.getByRole('region', { name: 'Tests it hits most' }));
    expect(tests.getByRole('link', { name: 'pays by card' }).getAttribute('href')).toBe(
      '/projects/1/tests/7',
    );
    const similar = within(screen.getByRole('region', { name: 'Similar failures' }));
    expect(await similar.findByText('91%')).toBeTruthy();
    expect(
      similar.getByRole('link', { name: 'expected 200 but was 502 (91% similar)' }).getAttribute('href'),
    ).toBe('/projects/1/failures/6');
    expect(similar.getByText('40%')).toBeTruthy();
    const facts = screen.getByRole('region', { name: 'Message' });
    expect(
      within(facts).getByText('First seen').nextElementSibling!.querySelector('a')!.getAttribute('href'),
    ).toBe('/runs/10');
    // A VIEWER reads; no form, nothing asked of the members.
    expect(screen.queryByRole('form', { name: 'Triage this failure' })).toBeNull();
    expect(screen.queryByRole('button', { name: 'Save' })).toBeNull();
    expect(calls(fetchImpl, '/api/projects/1/members')).toHaveLength(0);
  });

  it('saves only what changed: triage, an issue link, a note and an assignee, and shows the issue by its key', async () => {
    let current = detail(5);
    const fetchImpl = api(
      routes('REPORTER', () => current, {
        'PATCH /api/failures/5': () => {
          current = {
            ...current,
            triage: 'PRODUCT_BUG',
            issue: { url: 'https://jira.example.com/browse/SHOP-12', key: 'SHOP-12' },
            note: 'Payments answer 500 since the deploy',
            assignee: { id: 4, email: 'ann@example.com', fullName: 'Ann Lee' },
          };
          return current;
        },
      }),
    );
    renderAt(at, pattern, <FailureDetail />, fetchImpl);
    const form = within(await screen.findByRole('form', { name: 'Triage this failure' }));
    const user = userEvent.setup();
    expect((form.getByRole('button', { name: 'Save' }) as HTMLButtonElement).disabled).toBe(true);
    await user.selectOptions(form.getByLabelText('Triage'), 'PRODUCT_BUG');
    await fill(user, form.getByLabelText('Link'), 'https://jira.example.com/browse/SHOP-12');
    await fill(user, form.getByLabelText('Key'), 'SHOP-12');
    await fill(user, form.getByLabelText('Note'), 'Payments answer 500 since the deploy');
    expect(form.getByText('36 / 2,000 characters')).toBeTruthy();
    // The members once each, and me.
    await waitFor(() => expect(form.getAllByRole('option', { name: /Ann Lee/ })).toHaveLength(1));
    expect(form.getByRole('option', { name: 'Me (Mia Me)' })).toBeTruthy();
    await user.selectOptions(form.getByLabelText('Assignee'), 'Ann Lee (ann@example.com)');
    await user.click(form.getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(patched(fetchImpl, 5)).toHaveLength(1));
    expect(patched(fetchImpl, 5)[0]).toEqual({
      triage: 'PRODUCT_BUG',
      issue: { url: 'https://jira.example.com/browse/SHOP-12', key: 'SHOP-12' },
      note: 'Payments answer 500 since the deploy',
      assigneeId: 4,
    });
    expect(await screen.findByText('Saved.')).toBeTruthy();
    const triage = within(screen.getByRole('region', { name: 'Triage' }));
    const link = triage.getByRole('link', { name: /^SHOP-12/ });
    expect(link.getAttribute('target')).toBe('_blank');
    expect(link.getAttribute('rel')).toBe('noopener noreferrer');
    expect(triage.getByText('Ann Lee')).toBeTruthy();
  });

  it('takes an issue off (null) and assigns it to me, sending only those two', async () => {
    const fetchImpl = api(
      routes('REPORTER', () =>
        detail(5, {
          triage: 'PRODUCT_BUG',
          issue: { url: 'https://jira.example.com/browse/SHOP-12', key: 'SHOP-12' },
          note: 'kept',
          assignee: { id: 4, email: 'ann@example.com', fullName: 'Ann Lee' },
        }),
      ),
    );
    renderAt(at, pattern, <FailureDetail />, fetchImpl);
    const form = within(await screen.findByRole('form', { name: 'Triage this failure' }));
    const user = userEvent.setup();
    await form.findByRole('option', { name: 'Me (Mia Me)' });
    await user.selectOptions(form.getByLabelText('Assignee'), 'Me (Mia Me)');
    await user.clear(form.getByLabelText('Link'));
    await user.clear(form.getByLabelText('Key'));
    await user.click(form.getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(patched(fetchImpl, 5)).toEqual([{ issue: null, assigneeId: 3 }]));
  });

  it("refuses a link that is not http(s) before asking, and shows the API's 400 beside its field", async () => {
    const fetchImpl = api(
      routes('MAINTAINER', () => detail(5), {
        'PATCH /api/failures/5': () =>
          json(400, {
            status: 400,
            error: 'Bad Request',
            message:
              'issue.key must be shorter than or equal to 100 characters; assigneeId: user 9 cannot see project 1',
          }),
      }),
    );
    renderAt(at, pattern, <FailureDetail />, fetchImpl);
    const form = within(await screen.findByRole('form', { name: 'Triage this failure' }));
    const user = userEvent.setup();
    await fill(user, form.getByLabelText('Link'), 'javascript:alert(1)');
    await user.click(form.getByRole('button', { name: 'Save' }));
    expect(form.getByText('An issue link must be an http:// or https:// address.')).toBeTruthy();
    expect(form.getByLabelText('Link').getAttribute('aria-invalid')).toBe('true');
    expect(patched(fetchImpl, 5)).toHaveLength(0);

    await user.clear(form.getByLabelText('Link'));
    await fill(user, form.getByLabelText('Link'), 'https://jira.example.com/browse/X-1');
    await user.type(form.getByLabelText('Key'), 'X-1');
    await user.click(form.getByRole('button', { name: 'Save' }));
    const keyError = await form.findByText('issue.key must be shorter than or equal to 100 characters');
    expect(form.getByLabelText('Key').getAttribute('aria-describedby')).toBe(keyError.id);
    expect(form.getByText('assigneeId: user 9 cannot see project 1').className).toBe('field-error');
    expect(form.queryByText('An issue link must be an http:// or https:// address.')).toBeNull();
  });

  it('counts the note to 2,000 characters and will not send a longer one', async () => {
    const fetchImpl = api(routes('REPORTER', () => detail(5, { note: 'x'.repeat(1999) })));
    renderAt(at, pattern, <FailureDetail />, fetchImpl);
    const form = within(await screen.findByRole('form', { name: 'Triage this failure' }));
    expect(form.getByText('1,999 / 2,000 characters')).toBeTruthy();
    const user = userEvent.setup();
    await user.type(form.getByLabelText('Note'), 'ab');
    expect(form.getByText('2,001 / 2,000 characters').className).toContain('field-error');
    await user.click(form.getByRole('button', { name: 'Save' }));
    expect(form.getByText('The note is 1 character too long.')).toBeTruthy();
    expect(patched(fetchImpl, 5)).toHaveLength(0);
  });

  it('marks a suggested triage as a suggestion until it is confirmed', async () => {
    let current = detail(5, {
      triage: 'PRODUCT_BUG',
      issue: { url: 'https://jira.example.com/browse/SHOP-3', key: 'SHOP-3' },
      suggested: { fromId: 2, similarity: 0.83 },
    });
    const fetchImpl = api(
      routes('REPORTER', () => current, {
        'PATCH /api/failures/5': () => (current = { ...current, suggested: null }),
      }),
    );
    renderAt(at, pattern, <FailureDetail />, fetchImpl);
    const triage = within(await screen.findByRole('region', { name: 'Triage' }));
    expect(triage.getByText('Product bug').textContent).toBe('Product bug · suggested');
    expect(triage.getByRole('note').textContent).toContain(
      'failure #2, 83% similar: its triage and issue, not confirmed yet',
    );
    expect(triage.getByRole('link', { name: 'failure #2' }).getAttribute('href')).toBe(
      '/projects/1/failures/2',
    );
    await userEvent.setup().click(triage.getByRole('button', { name: 'Confirm suggestion' }));
    await waitFor(() => expect(patched(fetchImpl, 5)).toEqual([{ triage: 'PRODUCT_BUG' }]));
    await waitFor(() => expect(triage.getByText('Product bug').textContent).toBe('Product bug'));
    expect(triage.queryByRole('button', { name: 'Confirm suggestion' })).toBeNull();
  });

  it('lets a VIEWER see a suggestion but not confirm it', async () => {
    const fetchImpl = api(
      routes('VIEWER', () => detail(5, { triage: 'NO_DEFECT', suggested: { fromId: 2, similarity: 0.7 } })),
    );
    renderAt(at, pattern, <FailureDetail />, fetchImpl);
    const triage = within(await screen.findByRole('region', { name: 'Triage' }));
    expect(triage.getByText('No defect').textContent).toBe('No defect · suggested');
    // Once the role is known: still no confirmation.
    await screen.findByRole('link', { name: '← Failures of Shop' });
    expect(triage.queryByRole('button', { name: 'Confirm suggestion' })).toBeNull();
  });

  it('says so while it loads and when it is not found', async () => {
    const fetchImpl = api(
      routes('REPORTER', () =>
        json(404, { status: 404, error: 'Not Found', message: 'Failure 5 not found' }),
      ),
    );
    renderAt(at, pattern, <FailureDetail />, fetchImpl);
    expect(screen.getByText(/Loading the failure/)).toBeTruthy();
    expect((await screen.findByRole('alert')).textContent).toBe('Failure 5 not found');
    expect(screen.getByRole('link', { name: /^← Failures of/ }).getAttribute('href')).toBe(
      '/projects/1/failures',
    );
  });
});

describe("A run's failure groups and their triage", () => {
  const group = (changes: Partial<FailureGroup>): FailureGroup => ({
    key: 'expected <n> but was <n>',
    count: 3,
    failed: 3,
    broken: 0,
    tests: 2,
    example: 'expected 200 but was 500',
    signatureId: 5,
    isNew: false,
    triage: 'TO_INVESTIGATE',
    issue: null,
    ...changes,
  });
  const render = (
    role: ProjectRole,
    groups: FailureGroup[],
    extra: Record<string, (url: URL) => unknown> = {},
  ) => {
    const fetchImpl = api({
      '/api/projects/1': project(role),
      '/api/runs/9/failure-groups': () => pageOf(groups),
      '/api/failures/5': () =>
        detail(5, { runs: 14, firstSeen: { runId: 2, at: '2026-11-02T08:00:00.000Z' } }),
      '/api/failures/6': () =>
        detail(6, {
          triage: 'SYSTEM_ISSUE',
          suggested: { fromId: 5, similarity: 0.8 },
          firstSeen: { runId: 9, at: '2026-11-25T08:00:00.000Z' },
          runs: 1,
        }),
      ...extra,
    });
    renderAt(
      '/runs/9',
      '/runs/:runId',
      <FailureGroups
        runId={9}
        projectId={1}
        active=""
        page={0}
        onPage={() => undefined}
        onPick={() => undefined}
      />,
      fetchImpl,
    );
    return fetchImpl;
  };

  it('says which causes are new and since when the others have been seen, with their triage and issue', async () => {
    const fetchImpl = render('VIEWER', [
      group({
        triage: 'PRODUCT_BUG',
        issue: { url: 'https://jira.example.com/browse/SHOP-12', key: 'SHOP-12' },
      }),
      group({ key: 'db down', example: SCRIPT, signatureId: 6, isNew: true, triage: 'SYSTEM_ISSUE' }),
    ]);
    const old = within(await screen.findByTestId('group-5'));
    expect(await old.findByText(/seen since/)).toBeTruthy();
    expect(old.getByText(/seen since/).textContent).toBe(
      `seen since ${new Date('2026-11-02T08:00:00.000Z').toLocaleDateString()} in 14 runs`,
    );
    expect(old.getByText('Product bug')).toBeTruthy();
    const issue = old.getByRole('link', { name: /^SHOP-12/ });
    expect(issue.getAttribute('rel')).toBe('noopener noreferrer');
    expect(issue.getAttribute('target')).toBe('_blank');
    expect(old.getByRole('link', { name: 'history of this cause' }).getAttribute('href')).toBe(
      '/projects/1/failures/5',
    );

    const fresh = within(screen.getByTestId('group-6'));
    expect(fresh.getByText('New')).toBeTruthy();
    expect(fresh.queryByText(/seen since/)).toBeNull();
    // Its triage came from a similar cause: said to be a suggestion.
    expect((await fresh.findByText(/System issue/)).textContent).toBe('System issue · suggested');
    expect(fresh.getByText(SCRIPT).tagName).toBe('CODE');
    expect(document.querySelector('main script, ol script, ol img')).toBeNull();
    // Each signature read once; a VIEWER gets no triage menu, once the role is known.
    await waitFor(() => expect(calls(fetchImpl, '/api/projects/1')).toHaveLength(1));
    await settled();
    expect(calls(fetchImpl, '/api/failures/5')).toHaveLength(1);
    expect(calls(fetchImpl, '/api/failures/6')).toHaveLength(1);
    expect(screen.queryByRole('button', { name: /^Triage/ })).toBeNull();
  });

  it('reads nothing more when the group says since when itself', async () => {
    const fetchImpl = render('REPORTER', [
      group({ firstSeen: { runId: 1, at: '2026-11-01T08:00:00.000Z' }, runs: 7, suggested: null }),
    ]);
    expect(await screen.findByText(/in 7 runs/)).toBeTruthy();
    expect(calls(fetchImpl, '/api/failures/5')).toHaveLength(0);
  });

  it('triages a cause in one click for a REPORTER, and confirms a suggestion', async () => {
    const fetchImpl = render(
      'REPORTER',
      [group({}), group({ key: 'db down', signatureId: 6, isNew: true, triage: 'SYSTEM_ISSUE' })],
      {
        'PATCH /api/failures/5': () => ({ ...signature(5), triage: 'AUTOMATION_BUG' }),
        'PATCH /api/failures/6': () => ({ ...signature(6), triage: 'SYSTEM_ISSUE' }),
      },
    );
    const user = userEvent.setup();
    const old = within(await screen.findByTestId('group-5'));
    const menu = await old.findByRole('button', { name: 'Triage the 3 failures of this group' });
    expect(menu.getAttribute('aria-expanded')).toBe('false');
    await user.click(menu);
    expect(menu.getAttribute('aria-expanded')).toBe('true');
    const options = within(old.getByRole('group', { name: 'Triage the 3 failures of this group' }));
    expect(options.getAllByRole('button').map((b) => b.textContent)).toEqual([
      'To investigate',
      'Product bug',
      'Automation bug',
      'System issue',
      'No defect',
    ]);
    expect(options.getByRole('button', { name: 'To investigate' }).getAttribute('aria-pressed')).toBe('true');
    await user.click(options.getByRole('button', { name: 'Automation bug' }));
    await waitFor(() => expect(patched(fetchImpl, 5)).toEqual([{ triage: 'AUTOMATION_BUG' }]));
    expect(old.queryByRole('group')).toBeNull();
    // The groups are read again: a triage applies to every occurrence.
    await waitFor(() => expect(calls(fetchImpl, '/api/runs/9/failure-groups').length).toBeGreaterThan(1));

    const fresh = within(screen.getByTestId('group-6'));
    expect((await fresh.findByText(/System issue/)).textContent).toBe('System issue · suggested');
    await user.click(fresh.getByRole('button', { name: 'Triage the 3 failures of this group' }));
    await user.click(fresh.getByRole('button', { name: 'Confirm suggestion: System issue' }));
    await waitFor(() => expect(patched(fetchImpl, 6)).toEqual([{ triage: 'SYSTEM_ISSUE' }]));
  });

  it('closes the menu on Escape without asking anything, and shows a refusal', async () => {
    const fetchImpl = render('REPORTER', [group({})], {
      'PATCH /api/failures/5': () =>
        json(403, {
          status: 403,
          error: 'Forbidden',
          message: 'Triage needs the REPORTER role in project 1',
        }),
    });
    const user = userEvent.setup();
    const item = within(await screen.findByTestId('group-5'));
    await user.click(await item.findByRole('button', { name: /^Triage/ }));
    await user.keyboard('{Escape}');
    expect(item.queryByRole('group')).toBeNull();
    expect(patched(fetchImpl, 5)).toHaveLength(0);
    await user.click(item.getByRole('button', { name: /^Triage/ }));
    await user.click(item.getByRole('button', { name: 'No defect' }));
    expect((await item.findByRole('alert')).textContent).toBe('Triage needs the REPORTER role in project 1');
  });
});
