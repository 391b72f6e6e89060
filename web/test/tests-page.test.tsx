import { cleanup, fireEvent, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { HistoryItem, ProjectRole } from '../src/api/client';
import { endOfDay } from '../src/pages/projects/tests/QuarantineForm';
import { TestsPage } from '../src/pages/projects/tests/TestsPage';
import { formatDate } from '../src/ui/components';
import { api, calls, json, pageOf, renderAt, requests, where, testCase } from './support';

/** uPlot stood in for: jsdom has no canvas (the history page draws durations). */
vi.mock('uplot', () => ({
  default: class {
    setSize() {}
    destroy() {}
  },
}));

export const historyItem = (id: number, status: HistoryItem['status']): HistoryItem => ({
  id,
  runId: 100 + id,
  testId: 1,
  name: 'pays by card',
  suite: 'Checkout',
  status,
  durationMs: 10,
  message: null,
  trace: null,
  retry: 0,
  runName: `nightly #${id}`,
  startedAt: null,
  attempts: [],
});

/** A run in which the test failed first and passed on its retry. */
const passedOnRetry = (id: number): HistoryItem => {
  const attempt = (retry: number, status: HistoryItem['status']) => ({
    id: id * 10 + retry,
    status,
    retry,
    durationMs: 10,
    startedAt: null,
    message: status === 'FAILED' ? 'timed out' : null,
    trace: null,
  });
  return { ...historyItem(id, 'PASSED'), retry: 1, attempts: [attempt(0, 'FAILED'), attempt(1, 'PASSED')] };
};

export const project = (role: ProjectRole) => () => ({
  id: 1,
  key: 'SHOP',
  name: 'Shop',
  role,
  latestRun: null,
});

const PAYS = testCase(1, 'pays by card', {
  state: 'FLAKY',
  flaky: true,
  flakeRate: 0.25,
  runs: 9,
  lastStatus: 'FAILED',
  lastFailedAt: '2026-11-25T08:00:00.000Z',
});
const SHIPS = testCase(2, 'ships abroad', {
  state: 'QUARANTINED',
  flakeRate: 0.5,
  quarantine: {
    since: '2026-11-24T10:00:00.000Z',
    reason: 'Flips on the shared staging database',
    auto: true,
    byUserId: null,
    until: null,
  },
});
const LOGS = testCase(3, 'logs in', { flakeRate: null, runs: 1 });

/** A WebSocket that never connects: these pages' live updates are tested elsewhere. */
class QuietSocket {
  static OPEN = 1;
  readyState = 0;
  send() {}
  close() {}
}
beforeEach(() => vi.stubGlobal('WebSocket', QuietSocket));
afterEach(() => {
  vi.unstubAllGlobals();
  vi.restoreAllMocks();
});

const TESTS = '/api/projects/1/tests';

describe("A project's Tests page", () => {
  const routes = (role: ProjectRole, tests: (url: URL) => unknown = () => pageOf([PAYS, SHIPS, LOGS])) => ({
    '/api/projects/1': project(role),
    [TESTS]: tests,
    '/api/projects/1/tests/1/history': () =>
      pageOf([historyItem(3, 'FAILED'), passedOnRetry(2), historyItem(1, 'PASSED')]),
    '/api/projects/1/tests/2/history': () => pageOf([historyItem(5, 'BROKEN')]),
    '/api/projects/1/tests/3/history': () => pageOf([]),
  });

  it('reads its state and name filters, sort and page from the URL, and puts changes back there', async () => {
    const fetchImpl = api(routes('VIEWER', () => pageOf([PAYS], 1, 20, 25)));
    renderAt(
      '/projects/1/tests?q=pay&state=QUARANTINED%2CFLAKY&sort=flakeRate%2Cdesc&page=1',
      '/projects/:projectId/tests',
      <TestsPage />,
      fetchImpl,
    );
    expect(await screen.findByRole('link', { name: 'pays by card' })).toBeTruthy();
    expect(Object.fromEntries(calls(fetchImpl, TESTS)[0].searchParams)).toEqual({
      q: 'pay',
      state: 'FLAKY,QUARANTINED',
      sort: 'flakeRate,desc',
      page: '1',
      size: '20',
    });
    expect(screen.getByText('25 tests, by Flake rate descending')).toBeTruthy();
    expect((screen.getByLabelText('Name') as HTMLInputElement).value).toBe('pay');
    const box = (name: string) => screen.getByLabelText(name) as HTMLInputElement;
    expect([box('healthy'), box('failing'), box('flaky'), box('quarantined')].map((b) => b.checked)).toEqual([
      false,
      false,
      true,
      true,
    ]);
    expect((screen.getByLabelText('Sort by') as HTMLSelectElement).value).toBe('flakeRate,desc');
    expect(screen.getByRole('columnheader', { name: /Flake rate/ }).getAttribute('aria-sort')).toBe(
      'descending',
    );
    expect(screen.getByText('Page 2 of 2')).toBeTruthy();

    const user = userEvent.setup();
    await user.click(box('healthy'));
    expect(where()).toBe('?q=pay&state=HEALTHY%2CFLAKY%2CQUARANTINED&sort=flakeRate%2Cdesc');
    await waitFor(() =>
      expect(calls(fetchImpl, TESTS).at(-1)!.searchParams.get('state')).toBe('HEALTHY,FLAKY,QUARANTINED'),
    );
    await user.click(box('flaky'));
    await user.click(box('quarantined'));
    await user.click(box('healthy'));
    expect(where()).toBe('?q=pay&sort=flakeRate%2Cdesc');
  }, 15_000);

  it('sorts by the select or a column header, and searches names as one types, all in the URL', async () => {
    const fetchImpl = api(routes('VIEWER', () => pageOf([PAYS])));
    renderAt('/projects/1/tests?q=pay', '/projects/:projectId/tests', <TestsPage />, fetchImpl);
    await screen.findByRole('link', { name: 'pays by card' });
    const user = userEvent.setup();
    await user.selectOptions(screen.getByLabelText('Sort by'), 'lastFailedAt,desc');
    expect(where()).toBe('?q=pay&sort=lastFailedAt%2Cdesc');
    await user.click(screen.getByRole('button', { name: /^First seen/ }));
    expect(where()).toBe('?q=pay&sort=firstSeenAt%2Casc');
    await user.click(screen.getByRole('button', { name: /^First seen/ }));
    expect(where()).toBe('?q=pay&sort=firstSeenAt%2Cdesc');
    await user.clear(screen.getByLabelText('Name'));
    await user.type(screen.getByLabelText('Name'), 'ships');
    // Applied after a pause in typing.
    // (Where q lands in the query depends on whether the cleared box was applied before the typing.)
    await waitFor(() =>
      expect(Object.fromEntries(new URLSearchParams(where()!))).toEqual({
        q: 'ships',
        sort: 'firstSeenAt,desc',
      }),
    );
    await waitFor(() => expect(calls(fetchImpl, TESTS).at(-1)!.searchParams.get('q')).toBe('ships'));
    expect(calls(fetchImpl, TESTS).filter((u) => u.searchParams.get('q')?.startsWith('s'))).toHaveLength(1);
  }, 15_000);

  it("shows each test's state, flake rate, last runs, first seen and last failed, and an automatic quarantine", async () => {
    const fetchImpl = api(routes('VIEWER'));
    renderAt('/projects/1/tests', '/projects/:projectId/tests', <TestsPage />, fetchImpl);
    const pays = within(await screen.findByTestId('test-1'));
    expect(pays.getByText('flaky', { selector: '.state-badge' })).toBeTruthy();
    expect(pays.getByText('25 %')).toBeTruthy();
    expect(pays.getByText('over 9 runs')).toBeTruthy();
    // Its last runs, oldest first, in words for a screen reader and each run's name on hover.
    // A run it passed only on retry is told apart, as on its history page.
    const strip = await pays.findByRole('img', {
      name: 'Last 3 runs: 1 passed, 1 passed on retry, 1 failed; latest failed',
    });
    expect([...strip.children].map((c) => [c.getAttribute('title'), c.className])).toEqual([
      ['nightly #1: passed', 'mini-strip-passed'],
      ['nightly #2: passed on retry', 'mini-strip-passed mini-strip-retried'],
      ['nightly #3: failed', 'mini-strip-failed'],
    ]);
    const failed = pays.getAllByRole('time').find((t) => t.getAttribute('dateTime') === PAYS.lastFailedAt)!;
    expect(failed.getAttribute('title')).toBe(formatDate(PAYS.lastFailedAt));
    expect(pays.getByRole('link', { name: 'pays by card' }).getAttribute('href')).toBe('/projects/1/tests/1');

    const ships = within(screen.getByTestId('test-2'));
    expect(ships.getByText('quarantined', { exact: false, selector: '.state-badge' }).textContent).toBe(
      'quarantined · auto',
    );
    expect(ships.getByText('Flips on the shared staging database')).toBeTruthy();
    expect(await ships.findByRole('img', { name: 'Last 1 run: 1 broken; latest broken' })).toBeTruthy();

    const logs = within(screen.getByTestId('test-3'));
    expect(logs.getByText('never')).toBeTruthy();
    expect(logs.getByText('(not run twice yet)')).toBeTruthy();
    expect(await logs.findByText('no runs yet')).toBeTruthy();

    // One history request a row, of its last 20 runs; a viewer has nothing to act with.
    for (const id of [1, 2, 3]) {
      const asked = calls(fetchImpl, `/api/projects/1/tests/${id}/history`);
      expect(asked.map((u) => u.searchParams.get('size'))).toEqual(['20']);
    }
    expect(screen.queryByRole('button', { name: /^Quarantine/ })).toBeNull();
    expect(screen.queryByRole('button', { name: /^Release/ })).toBeNull();
    expect(document.title).toBe('Tests of Shop · Test Management');
    // The project's pages, this one marked; a viewer is offered no import.
    const nav = within(screen.getByRole('navigation', { name: 'Project' }));
    expect(nav.getAllByRole('link').map((a) => [a.textContent, a.getAttribute('href')])).toEqual([
      ['Runs', '/projects/1'],
      ['Tests', '/projects/1/tests'],
      ['Failures', '/projects/1/failures'],
      ['Members', '/projects/1/members'],
      ['Settings', '/projects/1/settings'],
    ]);
    expect(nav.getByRole('link', { name: 'Tests' }).getAttribute('aria-current')).toBe('page');
  });

  it('lets a MAINTAINER quarantine a test from its row with a reason and a last day', async () => {
    let quarantined = false;
    const fetchImpl = api({
      ...routes('MAINTAINER', () =>
        pageOf(quarantined ? [{ ...PAYS, state: 'QUARANTINED', quarantine: SHIPS.quarantine }] : [PAYS]),
      ),
      'PUT /api/projects/1/tests/1/quarantine': () => {
        quarantined = true;
        return { ...PAYS, state: 'QUARANTINED' };
      },
    });
    renderAt('/projects/1/tests', '/projects/:projectId/tests', <TestsPage />, fetchImpl);
    const user = userEvent.setup();
    await user.click(await screen.findByRole('button', { name: 'Quarantine pays by card' }));
    const form = within(screen.getByRole('form', { name: 'Quarantine pays by card' }));
    // No reason: said so, nothing sent.
    await user.click(form.getByRole('button', { name: 'Quarantine' }));
    expect(form.getByText('Say why: the reason shows to everyone who sees the test.')).toBeTruthy();
    expect(form.getByLabelText('Reason').getAttribute('aria-invalid')).toBe('true');
    expect(requests(fetchImpl, 'PUT', '/api/projects/1/tests/1/quarantine')).toHaveLength(0);

    await user.type(form.getByLabelText('Reason'), '  Times out on staging, BUG-12  ');
    fireEvent.change(form.getByLabelText('Until (optional)'), { target: { value: '2099-12-31' } });
    await user.click(form.getByRole('button', { name: 'Quarantine' }));
    await screen.findByText('pays by card is quarantined.');
    const [put] = requests(fetchImpl, 'PUT', '/api/projects/1/tests/1/quarantine');
    expect(JSON.parse(String(put[1]!.body))).toEqual({
      reason: 'Times out on staging, BUG-12',
      until: endOfDay('2099-12-31'),
    });
    // The form closes and the list is read again: the row now offers the release, and has the focus back.
    expect(screen.queryByRole('form', { name: 'Quarantine pays by card' })).toBeNull();
    const release = await screen.findByRole('button', { name: 'Release pays by card' });
    await waitFor(() => expect(document.activeElement).toBe(release));
  });

  it("shows the API's refusal of a quarantine in its form, the reason kept", async () => {
    const fetchImpl = api({
      ...routes('MAINTAINER', () => pageOf([PAYS])),
      'PUT /api/projects/1/tests/1/quarantine': () =>
        json(403, { status: 403, error: 'Forbidden', message: 'Quarantining needs the MAINTAINER role' }),
    });
    renderAt('/projects/1/tests', '/projects/:projectId/tests', <TestsPage />, fetchImpl);
    const user = userEvent.setup();
    await user.click(await screen.findByRole('button', { name: 'Quarantine pays by card' }));
    const form = within(screen.getByRole('form', { name: 'Quarantine pays by card' }));
    await user.type(form.getByLabelText('Reason'), 'flaky');
    await user.click(form.getByRole('button', { name: 'Quarantine' }));
    expect((await form.findByRole('alert')).textContent).toBe('Quarantining needs the MAINTAINER role');
    expect((form.getByLabelText('Reason') as HTMLInputElement).value).toBe('flaky');
    expect(screen.getAllByRole('alert')).toHaveLength(1);
    await user.click(form.getByRole('button', { name: 'Cancel' }));
    expect(screen.queryByRole('form', { name: 'Quarantine pays by card' })).toBeNull();
    // Escape closes it too, the focus back on the button that opened it.
    const opener = screen.getByRole('button', { name: 'Quarantine pays by card' });
    await user.click(opener);
    expect(document.activeElement).toBe(screen.getByLabelText('Reason'));
    await user.keyboard('{Escape}');
    expect(screen.queryByRole('form', { name: 'Quarantine pays by card' })).toBeNull();
    await waitFor(() => expect(document.activeElement).toBe(opener));
  });

  it('lets a MAINTAINER release a quarantined test from its row', async () => {
    let released = false;
    const fetchImpl = api({
      ...routes('OWNER', () => pageOf([released ? { ...SHIPS, state: 'FLAKY', quarantine: null } : SHIPS])),
      'DELETE /api/projects/1/tests/2/quarantine': () => {
        released = true;
        return json(204);
      },
    });
    renderAt('/projects/1/tests', '/projects/:projectId/tests', <TestsPage />, fetchImpl);
    const user = userEvent.setup();
    await user.click(await screen.findByRole('button', { name: 'Release ships abroad' }));
    expect(await screen.findByText('ships abroad is released from quarantine.')).toBeTruthy();
    expect(requests(fetchImpl, 'DELETE', '/api/projects/1/tests/2/quarantine')).toHaveLength(1);
    expect(await screen.findByRole('button', { name: 'Quarantine ships abroad' })).toBeTruthy();
  });

  it.each(['VIEWER', 'REPORTER'] as const)('offers a %s no quarantine or release', async (role) => {
    const fetchImpl = api(routes(role));
    renderAt('/projects/1/tests', '/projects/:projectId/tests', <TestsPage />, fetchImpl);
    await screen.findByRole('link', { name: 'pays by card' });
    expect(screen.queryAllByRole('button', { name: /^(Quarantine|Release)/ })).toEqual([]);
    expect(screen.queryByRole('columnheader', { name: 'Actions' })).toBeNull();
  });

  it('says when a project has no tests, when none match, and why a list failed', async () => {
    const empty = api(routes('OWNER', () => pageOf([])));
    renderAt('/projects/1/tests', '/projects/:projectId/tests', <TestsPage />, empty);
    expect(await screen.findByText(/No tests yet: a test appears here with its first result/)).toBeTruthy();
    cleanup();

    const none = api(routes('OWNER', () => pageOf([])));
    renderAt('/projects/1/tests?state=FLAKY&q=zzz', '/projects/:projectId/tests', <TestsPage />, none);
    expect(await screen.findByText(/No tests match these filters/)).toBeTruthy();
    await userEvent.setup().click(screen.getByRole('button', { name: 'Show every test' }));
    expect(where()).toBe('');
    cleanup();

    const failing = api(
      routes('OWNER', () =>
        json(400, { status: 400, error: 'Bad Request', message: 'sort must be one of: name, flakeRate' }),
      ),
    );
    renderAt('/projects/1/tests?sort=colour%2Casc', '/projects/:projectId/tests', <TestsPage />, failing);
    expect((await screen.findByRole('alert')).textContent).toBe('sort must be one of: name, flakeRate');
  });

  it('says a page past the last is past it, and goes back to the first', async () => {
    const fetchImpl = api(routes('OWNER', () => pageOf([], 4, 20, 27)));
    renderAt('/projects/1/tests?page=4', '/projects/:projectId/tests', <TestsPage />, fetchImpl);
    expect(await screen.findByText(/Page 5 is past the last page \(2 pages, 27 tests\)/)).toBeTruthy();
    expect(screen.queryByText(/No tests yet/)).toBeNull();
    await userEvent.setup().click(screen.getByRole('button', { name: 'Go to the first page' }));
    expect(where()).toBe('');
  });

  it('offers no filters for a project that cannot be opened, only why', async () => {
    const notFound = () => json(404, { status: 404, error: 'Not Found', message: 'Project 1 not found' });
    const gone = api({ ...routes('OWNER'), '/api/projects/1': notFound, [TESTS]: notFound });
    renderAt('/projects/1/tests', '/projects/:projectId/tests', <TestsPage />, gone);
    expect((await screen.findAllByText('Project 1 not found')).length).toBeGreaterThan(0);
    expect(document.querySelector('.filters')).toBeNull();
  });

  it('shows the loading state while the list is read', async () => {
    let answer: (r: Response) => void = () => undefined;
    const fetchImpl = api({
      ...routes('OWNER'),
      [TESTS]: () => new Promise<Response>((resolve) => (answer = resolve)),
    });
    renderAt('/projects/1/tests', '/projects/:projectId/tests', <TestsPage />, fetchImpl);
    expect(await screen.findByText('Loading tests…')).toBeTruthy();
    answer(json(200, pageOf([LOGS])));
    expect(await screen.findByRole('link', { name: 'logs in' })).toBeTruthy();
  });
});
