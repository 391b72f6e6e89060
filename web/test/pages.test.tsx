import { act, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Comparison, FailureGroup, Page, Result, Run, TestChange } from '../src/api/client';
import { CompareView } from '../src/pages/projects/ComparePage';
import { ProjectRuns } from '../src/pages/projects/ProjectRuns';
import { FailureGroups, RunPage } from '../src/pages/projects/RunPage';
import { api, calls, json, pageOf, renderAt, where } from './support';

const run = (id: number, name = `run ${id}`): Run => ({
  id,
  projectId: 1,
  uuid: null,
  name,
  status: 'FINISHED',
  startedAt: '2026-11-25T10:00:00.000Z',
  finishedAt: '2026-11-25T10:01:00.000Z',
  attributes: {},
  counts: { total: 2, passed: 1, failed: 1, broken: 0, skipped: 0, passedOnRetry: 0, attempts: 2 },
  stream: 'run',
  newFailures: null,
  gate: { status: 'OFF' },
  pinned: false,
});

/** A stand-in for the browser's WebSocket: the test plays the service's side of /ws. */
class FakeSocket {
  static OPEN = 1;
  static all: FakeSocket[] = [];
  readyState = 0;
  sent: unknown[] = [];
  onopen?: () => void;
  onmessage?: (message: { data: string }) => void;
  onclose?: (close: { code: number }) => void;
  constructor(readonly url: string) {
    FakeSocket.all.push(this);
    setTimeout(() => {
      this.readyState = 1;
      this.onopen?.();
    });
  }
  send(frame: string) {
    this.sent.push(JSON.parse(frame));
  }
  close() {
    this.readyState = 3;
  }
  receive(frame: object) {
    act(() => this.onmessage?.({ data: JSON.stringify(frame) }));
  }
}

beforeEach(() => {
  FakeSocket.all = [];
  vi.stubGlobal('WebSocket', FakeSocket);
});
afterEach(() => vi.unstubAllGlobals());

describe("A project's runs page", () => {
  const routes = (runs: () => Page<Run>) => ({
    '/api/projects/1': () => ({ id: 1, key: 'P', name: 'Shop', role: 'OWNER', latestRun: null }),
    '/api/projects/1/runs': runs,
    '/api/projects/1/trend': () => ({ points: [] }),
  });

  it('reads its filters and page from the URL, and puts changes back there, a new filter on page one', async () => {
    const fetchImpl = api(routes(() => pageOf([run(7, 'nightly 7')], 1, 20, 45)));
    renderAt(
      '/projects/1?q=nightly&status=FINISHED&page=1',
      '/projects/:projectId',
      <ProjectRuns />,
      fetchImpl,
    );
    expect(await screen.findByRole('link', { name: 'nightly 7' })).toBeTruthy();
    const first = calls(fetchImpl, '/api/projects/1/runs')[0].searchParams;
    expect(Object.fromEntries(first)).toEqual({
      q: 'nightly',
      status: 'FINISHED',
      page: '1',
      size: '20',
      sort: 'startedAt,desc',
    });
    expect((screen.getByLabelText('Name') as HTMLInputElement).value).toBe('nightly');
    expect(screen.getByText('Page 2 of 3')).toBeTruthy();

    const user = userEvent.setup();
    await user.click(screen.getByRole('button', { name: 'Next' }));
    expect(where()).toBe('?q=nightly&status=FINISHED&page=2');
    await user.selectOptions(screen.getByLabelText('Status'), 'IN_PROGRESS');
    expect(where()).toBe('?q=nightly&status=IN_PROGRESS');
    await user.clear(screen.getByLabelText('Name'));
    await user.type(screen.getByLabelText('Name'), 'weekly');
    // Applied after a pause in typing, not a request a keystroke.
    await waitFor(() => expect(where()).toBe('?q=weekly&status=IN_PROGRESS'));
    await waitFor(() =>
      expect(calls(fetchImpl, '/api/projects/1/runs').at(-1)!.searchParams.get('q')).toBe('weekly'),
    );
    expect(
      calls(fetchImpl, '/api/projects/1/runs').filter((u) => u.searchParams.get('q')?.startsWith('w')),
    ).toHaveLength(1);
  });

  it('says when a finished run finished, and when a run in progress started', async () => {
    const long = {
      ...run(3, 'long'),
      startedAt: '2026-11-25T08:00:00.000Z',
      finishedAt: '2026-11-25T10:05:00.000Z',
    };
    const going = { ...run(4, 'going'), status: 'IN_PROGRESS' as const, finishedAt: null };
    renderAt(
      '/projects/1',
      '/projects/:projectId',
      <ProjectRuns />,
      api(routes(() => pageOf([long, going]))),
    );
    const row = (name: string) => screen.getByRole('link', { name }).closest('tr')!;
    await screen.findByRole('link', { name: 'long' });
    const finished = within(row('long')).getByText(/^finished/);
    expect(finished.querySelector('time')!.getAttribute('datetime')).toBe('2026-11-25T10:05:00.000Z');
    const started = within(row('going')).getByText(/^in progress, started/);
    expect(started.querySelector('time')!.getAttribute('datetime')).toBe(going.startedAt);
  });

  it('says a page past the last is past it, and goes back to the first', async () => {
    renderAt(
      '/projects/1?page=3',
      '/projects/:projectId',
      <ProjectRuns />,
      api(routes(() => pageOf([], 3, 20, 21))),
    );
    expect(await screen.findByText(/Page 4 is past the last page \(2 pages, 21 runs\)/)).toBeTruthy();
    expect(screen.queryByText(/No runs yet/)).toBeNull();
    await userEvent.setup().click(screen.getByRole('button', { name: 'Go to the first page' }));
    expect(where()).toBe('');
  });

  it('says once that a project cannot be opened, with nothing to filter and the way back to the projects', async () => {
    const missing = () => json(404, { status: 404, error: 'Not Found', message: 'Project 1 not found' });
    renderAt(
      '/projects/1',
      '/projects/:projectId',
      <ProjectRuns />,
      api({ '/api/projects/1': missing, '/api/projects/1/runs': missing, '/api/projects/1/trend': missing }),
    );
    expect(await screen.findByText('Project 1 not found')).toBeTruthy();
    expect(screen.getAllByText('Project 1 not found')).toHaveLength(1);
    expect(screen.queryByLabelText('Name')).toBeNull();
    expect(screen.queryByRole('link', { name: 'Tests' })).toBeNull();
    expect(screen.queryByRole('heading', { name: 'Runs' })).toBeNull();
    expect(screen.getByRole('link', { name: 'Go to your projects' }).getAttribute('href')).toBe('/');
  });

  it('merges live events into the page shown, and refetches on resync', async () => {
    const fetchImpl = api(routes(() => pageOf([run(1, 'first')])));
    renderAt('/projects/1', '/projects/:projectId', <ProjectRuns />, fetchImpl);
    await screen.findByRole('link', { name: 'first' });
    const socket = FakeSocket.all[0];
    await waitFor(() =>
      expect(socket.sent).toEqual([
        { type: 'auth', token: 'jwt' },
        { type: 'subscribe', projectId: 1 },
      ]),
    );
    socket.receive({ type: 'subscribed', projectId: 1 });
    expect(await screen.findByText('● Live')).toBeTruthy();
    const before = calls(fetchImpl, '/api/projects/1/runs').length;

    const created = {
      ...run(2, 'second'),
      status: 'IN_PROGRESS',
      finishedAt: null,
      counts: { total: 0, passed: 0, failed: 0, broken: 0, skipped: 0 },
    };
    socket.receive({
      type: 'event',
      projectId: 1,
      event: 'run.created',
      data: { runId: 2, run: created },
      at: '',
    });
    expect(await screen.findByRole('link', { name: 'second' })).toBeTruthy();
    socket.receive({
      type: 'event',
      projectId: 1,
      event: 'results.added',
      data: { runId: 2, counts: { total: 3, passed: 2, failed: 1, broken: 0, skipped: 0 } },
      at: '',
    });
    expect(
      await screen.findByRole('img', { name: '3 results: 2 passed, 1 failed, 0 broken, 0 skipped' }),
    ).toBeTruthy();
    // Merged, not refetched.
    expect(calls(fetchImpl, '/api/projects/1/runs')).toHaveLength(before);

    socket.receive({ type: 'resync' });
    await waitFor(() => expect(calls(fetchImpl, '/api/projects/1/runs').length).toBeGreaterThan(before));
  });
});

describe('The run page', () => {
  // jsdom lays nothing out: the results' scroller is given a screenful's size, as a browser would.
  beforeEach(() => {
    for (const [name, size] of [
      ['clientHeight', 600],
      ['clientWidth', 1000],
    ] as const) {
      vi.spyOn(Element.prototype, name, 'get').mockImplementation(function (this: Element) {
        return this.classList.contains('vscroll') ? size : 0;
      });
    }
  });
  afterEach(() => vi.restoreAllMocks());

  const result = (id: number, status: Result['status'] = 'PASSED'): Result => ({
    id,
    runId: 5,
    testId: id,
    name: `test ${id}`,
    suite: 'Suite',
    status,
    durationMs: id,
    message: status === 'PASSED' ? null : `expected ${id}`,
    trace: status === 'PASSED' ? null : `at line ${id}`,
    retry: 0,
    outcome: true,
    attempts: 1,
    passedOnRetry: false,
  });

  it('asks for the filters in the URL, reads only the pages in view, sorts by a header and links each result', async () => {
    const fetchImpl = api({
      '/api/runs/5': () => ({
        ...run(5, 'big run'),
        counts: { total: 100_000, passed: 99_000, failed: 1000, broken: 0, skipped: 0 },
      }),
      '/api/runs/5/results': (url) => {
        const page = Number(url.searchParams.get('page'));
        return pageOf(
          Array.from({ length: 100 }, (_, i) => result(page * 100 + i + 1, 'FAILED')),
          page,
          100,
          1000,
        );
      },
      '/api/runs/5/suites': () => pageOf([{ suite: 'Suite', total: 1000, failed: 1000 }]),
      '/api/runs/5/failure-groups': () => pageOf([]),
    });
    renderAt('/runs/5?status=FAILED%2CBROKEN&q=test', '/runs/:runId', <RunPage />, fetchImpl);
    expect(await screen.findByRole('link', { name: 'test 1' })).toBeTruthy();
    expect(screen.getByText('1,000 results')).toBeTruthy();
    const asked = calls(fetchImpl, '/api/runs/5/results');
    expect(Object.fromEntries(asked[0].searchParams)).toEqual({
      status: 'FAILED,BROKEN',
      q: 'test',
      page: '0',
      size: '100',
    });
    // 1000 rows, a screenful in view: the first page only, and far fewer rows in the document than results.
    expect(asked.map((u) => u.searchParams.get('page'))).toEqual(['0']);
    expect(screen.getAllByRole('row').length).toBeLessThan(60);
    expect(screen.getByRole('table').getAttribute('aria-rowcount')).toBe('1001');

    const user = userEvent.setup();
    await user.click(screen.getByRole('button', { name: /^Duration/ }));
    expect(where()).toBe('?status=FAILED%2CBROKEN&q=test&sort=durationMs%2Casc');
    await waitFor(() =>
      expect(calls(fetchImpl, '/api/runs/5/results').at(-1)!.searchParams.get('sort')).toBe('durationMs,asc'),
    );
    await user.click(screen.getByRole('button', { name: /^Duration/ }));
    expect(where()).toContain('sort=durationMs%2Cdesc');
    expect(screen.getByRole('columnheader', { name: /Duration/ }).getAttribute('aria-sort')).toBe(
      'descending',
    );

    // A result opens on a page of its own (ResultPage, tested in run-page.test.tsx).
    expect((await screen.findByRole('link', { name: 'test 3' })).getAttribute('href')).toBe(
      '/runs/5/results/3',
    );
  });
});

describe('The run page when its results fail', () => {
  it('says why in the table, and still reads the failure groups and suites', async () => {
    const fetchImpl = api({
      '/api/runs/5': () => run(5, 'nightly'),
      '/api/runs/5/results': () =>
        json(503, { status: 503, error: 'Service Unavailable', message: 'The database is unavailable' }),
      '/api/runs/5/suites': () => pageOf([{ suite: 'Smoke', total: 2, failed: 1 }]),
      '/api/runs/5/failure-groups': () =>
        pageOf([{ key: 'timed out', count: 1, failed: 1, broken: 0, tests: 1, example: 'timed out' }]),
    });
    renderAt('/runs/5', '/runs/:runId', <RunPage />, fetchImpl);
    expect((await screen.findByRole('alert')).textContent).toBe('The database is unavailable');
    // Not "Grouping failures…" for ever: what waits for the first rows is told when they fail too.
    expect(await screen.findByText('timed out', { selector: 'code' })).toBeTruthy();
    expect(screen.queryByText(/Grouping failures/)).toBeNull();
    await waitFor(() => expect(calls(fetchImpl, '/api/runs/5/suites')).toHaveLength(1));
  });
});

describe('The run page when the run cannot be read', () => {
  it('says not found only for a 404, and offers to ask again when the service failed', async () => {
    let fails = true;
    const fetchImpl = api({
      '/api/runs/5': () =>
        fails
          ? json(503, { status: 503, error: 'Service Unavailable', message: 'The database is unavailable' })
          : run(5, 'nightly'),
      '/api/runs/5/results': () => pageOf([]),
    });
    renderAt('/runs/5', '/runs/:runId', <RunPage />, fetchImpl);
    expect((await screen.findByRole('heading', { level: 1 })).textContent).toBe('Run could not be loaded');
    expect(screen.getByRole('alert').textContent).toContain('The database is unavailable');
    fails = false;
    await userEvent.setup().click(screen.getByRole('button', { name: 'Try again' }));
    expect(await screen.findByRole('heading', { level: 1, name: 'nightly' })).toBeTruthy();
  });

  it('titles a run the API does not know "not found", with nothing to retry', async () => {
    renderAt(
      '/runs/6',
      '/runs/:runId',
      <RunPage />,
      api({
        '/api/runs/6': () => json(404, { status: 404, error: 'Not Found', message: 'Run 6 not found' }),
      }),
    );
    expect((await screen.findByRole('heading', { level: 1 })).textContent).toBe('Run not found');
    expect(screen.queryByRole('button', { name: 'Try again' })).toBeNull();
  });
});

describe('Failure groups', () => {
  it('shows each cause with its count, and picks one to filter by', async () => {
    const groups: FailureGroup[] = [
      {
        key: 'Connection refused: db:<n>',
        count: 300,
        failed: 0,
        broken: 300,
        tests: 300,
        example: 'Connection refused: db:5432',
      },
      { key: '(no message)', count: 2, failed: 2, broken: 0, tests: 1, example: null },
    ];
    const fetchImpl = api({ '/api/runs/5/failure-groups': () => pageOf(groups) });
    const onPick = vi.fn();
    renderAt(
      '/runs/5',
      '/runs/:runId',
      <FailureGroups runId={5} active="(no message)" page={0} onPage={() => undefined} onPick={onPick} />,
      fetchImpl,
    );
    // A message of the group as it was sent, the normalised key only as its tooltip.
    const example = await screen.findByText('Connection refused: db:5432');
    expect(example.getAttribute('title')).toBe('Connection refused: db:<n>');
    expect(screen.queryByText('Connection refused: db:<n>')).toBeNull();
    expect(screen.getByText('(no message)').getAttribute('title')).toBe('(no message)');
    expect(
      screen.getByText(
        '2 causes: failures with the same message, numbers, ids and temporary paths aside. Each shows one of its messages.',
      ),
    ).toBeTruthy();
    const items = screen.getAllByRole('listitem');
    expect(within(items[0]).getByText('300')).toBeTruthy();
    expect(within(items[0]).getByText('300 tests · 300 broken')).toBeTruthy();
    expect(within(items[1]).getByText('1 test · 2 failed')).toBeTruthy();
    expect(within(items[1]).getByRole('button').getAttribute('aria-pressed')).toBe('true');
    await userEvent
      .setup()
      .click(screen.getByRole('button', { name: 'Show the 300 failures of this group' }));
    expect(onPick).toHaveBeenCalledWith('Connection refused: db:<n>');
  });
});

describe('The comparison of two runs', () => {
  const comparison: Comparison = {
    head: run(9, 'nightly 9'),
    base: run(8, 'nightly 8'),
    sameRevision: false,
    summary: { newFailures: 0, fixed: 2, stillFailing: 1, flaky: 0, added: 3, removed: 0, unchanged: 40 },
  };
  const change = (
    name: string,
    c: TestChange['change'],
    base: TestChange['baseStatus'],
    head: TestChange['headStatus'],
  ): TestChange => ({
    testId: name.length,
    suite: 'S',
    name,
    change: c,
    baseStatus: base,
    headStatus: head,
    message: head === 'FAILED' ? 'boom' : null,
  });

  it('counts each kind of change, opens on the first that has tests, and lists them with both statuses', async () => {
    const fetchImpl = api({
      '/api/projects/1/runs': () => pageOf([run(9, 'nightly 9'), run(8, 'nightly 8'), run(7, 'nightly 7')]),
      '/api/runs/9/compare/tests': (url) =>
        url.searchParams.get('change') === 'FIXED'
          ? pageOf([
              change('logs in', 'FIXED', 'FAILED', 'PASSED'),
              change('pays', 'FIXED', 'BROKEN', 'PASSED'),
            ])
          : pageOf([change('ships', 'STILL_FAILING', 'FAILED', 'FAILED')]),
    });
    const set = vi.fn();
    renderAt(
      '/runs/9/compare',
      '/runs/:runId/compare',
      <CompareView comparison={comparison} change="" page={0} set={set} />,
      fetchImpl,
    );
    // No new failures: the first kind with tests is "Fixed".
    expect(screen.getByRole('button', { name: '2 Fixed' }).getAttribute('aria-pressed')).toBe('true');
    expect(screen.getByRole('button', { name: '0 New failures' }).getAttribute('aria-pressed')).toBe('false');
    const rows = await screen.findAllByRole('row');
    expect(rows.map((r) => r.textContent)).toEqual([
      'TestBeforeNowMessage',
      'logs inSfailedpassed',
      'paysSbrokenpassed',
    ]);
    expect(calls(fetchImpl, '/api/runs/9/compare/tests')[0].searchParams.get('base')).toBe('8');
    expect((screen.getByLabelText('Compared with') as HTMLSelectElement).value).toBe('8');

    const user = userEvent.setup();
    await user.click(screen.getByRole('button', { name: '1 Still failing' }));
    expect(set).toHaveBeenCalledWith({ change: 'STILL_FAILING', base: '8' });
    await user.selectOptions(screen.getByLabelText('Compared with'), '7');
    expect(set).toHaveBeenCalledWith({ base: '7', change: '' });
  });

  it("says so when the run is its project's first", () => {
    const fetchImpl = api({
      '/api/projects/1/runs': () => pageOf([run(9)]),
      '/api/runs/9/compare/tests': () => pageOf([change('new test', 'ADDED', null, 'PASSED')]),
    });
    renderAt(
      '/runs/9/compare',
      '/runs/:runId/compare',
      <CompareView
        comparison={{
          ...comparison,
          base: null,
          summary: { ...comparison.summary, fixed: 0, stillFailing: 0 },
        }}
        change=""
        page={0}
        set={() => undefined}
      />,
      fetchImpl,
    );
    expect(
      screen.getByText(/This is the first finished run of its stream: every test in it is new/),
    ).toBeTruthy();
    expect(screen.getByRole('button', { name: '3 Added' }).getAttribute('aria-pressed')).toBe('true');
  });
});
