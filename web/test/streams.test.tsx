import { act, render, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Result, ResultDetail, Run, RunCounts, Stream } from '../src/api/client';
import { ProjectRuns } from '../src/pages/projects/ProjectRuns';
import { AttemptBadge } from '../src/pages/projects/run/Attempts';
import { retriedTests } from '../src/pages/projects/run/PassedOnRetry';
import { outcomeCounts } from '../src/pages/projects/run/RunSummary';
import { RunPage } from '../src/pages/projects/RunPage';
import { CiLink, ciLink } from '../src/ui/ci-link';
import { RelativeTime, relativeTime } from '../src/ui/relative-time';
import { labelledSplits, passRateRange, runLabel } from '../src/ui/trend-scale';
import { api, calls, pageOf, renderAt, where } from './support';

const counts = (c: Partial<RunCounts> = {}): RunCounts => ({
  total: 2,
  passed: 1,
  failed: 1,
  broken: 0,
  skipped: 0,
  passedOnRetry: 0,
  attempts: 2,
  ...c,
});

const run = (id: number, name: string, stream: string, attributes: Record<string, string> = {}): Run => ({
  id,
  projectId: 1,
  uuid: null,
  name,
  status: 'FINISHED',
  startedAt: '2026-11-25T10:00:00.000Z',
  finishedAt: '2026-11-25T10:01:00.000Z',
  attributes,
  counts: counts(),
  newFailures: null,
  gate: { status: 'OFF' },
  pinned: false,
  stream,
});

/** A WebSocket that never connects: these pages' live updates are tested in pages.test.tsx. */
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

describe('Relative time', () => {
  const now = Date.parse('2026-11-26T12:00:00.000Z');
  it('says how long ago, as one scans a list, and the date itself past a month', () => {
    expect(relativeTime('2026-11-26T11:59:30.000Z', now)).toBe('just now');
    expect(relativeTime('2026-11-26T12:00:30.000Z', now)).toBe('just now');
    expect(relativeTime('2026-11-26T11:55:00.000Z', now)).toBe('5 min ago');
    expect(relativeTime('2026-11-26T09:00:00.000Z', now)).toBe('3 h ago');
    expect(relativeTime('2026-11-25T09:00:00.000Z', now)).toBe('yesterday');
    expect(relativeTime('2026-11-20T12:00:00.000Z', now)).toBe('6 d ago');
    expect(relativeTime('2026-09-01T12:00:00.000Z', now)).toBe(
      new Date('2026-09-01T12:00:00.000Z').toLocaleDateString(),
    );
    expect(relativeTime('not a date', now)).toBe('—');
  });

  it('gives the exact time on hover and to machines', () => {
    vi.spyOn(Date, 'now').mockReturnValue(now);
    render(<RelativeTime iso="2026-11-26T09:00:00.000Z" />);
    const time = screen.getByText('3 h ago');
    expect(time.tagName).toBe('TIME');
    expect(time.getAttribute('dateTime')).toBe('2026-11-26T09:00:00.000Z');
    expect(time.getAttribute('title')).toBe(new Date('2026-11-26T09:00:00.000Z').toLocaleString());
  });
});

describe('The CI link of a run', () => {
  it('is the ci or build_url attribute when it is an http(s) address, never another scheme', () => {
    expect(ciLink({ ci: 'https://ci.example.com/job/7' })).toBe('https://ci.example.com/job/7');
    expect(ciLink({ build_url: 'http://jenkins:8080/job/1/' })).toBe('http://jenkins:8080/job/1/');
    expect(ciLink({ ci: 'not a url', build_url: 'https://b.example/1' })).toBe('https://b.example/1');
    expect(ciLink({ ci: 'javascript:alert(1)' })).toBeUndefined();
    expect(ciLink({ ci: 'data:text/html,hi' })).toBeUndefined();
    expect(ciLink({ branch: 'main' })).toBeUndefined();
  });

  it('opens in a new tab without handing the page to it', () => {
    render(<CiLink attributes={{ ci: 'https://ci.example.com/job/7' }} name="nightly #7" />);
    const link = screen.getByRole('link', { name: 'CI build, of nightly #7, opens in a new tab' });
    expect(link.getAttribute('href')).toBe('https://ci.example.com/job/7');
    expect(link.getAttribute('target')).toBe('_blank');
    expect(link.getAttribute('rel')).toBe('noopener noreferrer');
  });
});

describe("The pass-rate chart's axes", () => {
  it('fits the y axis to where the runs sit: 95-100% for runs between 96% and 99.9%', () => {
    const range = passRateRange([96.2, 99.9, null, 98.5]);
    expect(range.splits).toEqual([95, 96, 97, 98, 99, 100]);
    expect(range.min).toBeLessThan(95);
    expect(range.min).toBeGreaterThan(94.5);
    expect(range.max).toBeGreaterThan(100);
    expect(range.max).toBeLessThan(100.5);
  });

  it('widens to the lowest run, down to 0-100% when a run passed nothing or none ran', () => {
    expect(passRateRange([100, 100]).splits[0]).toBe(99);
    expect(passRateRange([100, 91]).splits[0]).toBe(90);
    expect(passRateRange([80.4, 99]).splits).toEqual([80, 85, 90, 95, 100]);
    expect(passRateRange([0, 100]).splits).toEqual([0, 25, 50, 75, 100]);
    expect(passRateRange([null]).splits).toEqual([0, 25, 50, 75, 100]);
  });

  it('labels at most three of its grid values, 100% always, so that the low chart keeps them apart', () => {
    const labelled = (splits: number[]) => [...labelledSplits(splits)].sort((a, b) => a - b);
    expect(labelled([95, 96, 97, 98, 99, 100])).toEqual([96, 98, 100]);
    expect(labelled([80, 85, 90, 95, 100])).toEqual([80, 90, 100]);
    expect(labelled([99, 99.5, 100])).toEqual([99, 99.5, 100]);
  });

  it('labels a run by its build number, else by its place', () => {
    expect(runLabel('nightly #1221', 3)).toBe('#1221');
    expect(runLabel('nightly build 57', 3)).toBe('#57');
    expect(runLabel('e2e-42', 3)).toBe('#42');
    expect(runLabel('manual import', 3)).toBe('3');
  });
});

describe("A project's stream selector", () => {
  const latestOf = (r: Run) => ({ ...r, passRate: 0.5 });
  const streams: Stream[] = [
    { stream: 'nightly · main', runs: 40, latestRun: latestOf(run(40, 'nightly #40', 'nightly · main')) },
    { stream: 'manual', runs: 1, latestRun: latestOf(run(41, 'upload.xml', 'manual')) },
  ];
  const routes = (list: Stream[] = streams) => ({
    '/api/projects/1': () => ({
      id: 1,
      key: 'P',
      name: 'Shop',
      role: 'OWNER',
      latestRun: { ...run(40, 'nightly #40', 'nightly · main'), passRate: 0.5 },
    }),
    '/api/projects/1/streams': () => pageOf(list),
    '/api/projects/1/runs': (url: URL) => {
      const stream = url.searchParams.get('stream');
      const all = [
        run(41, 'upload.xml', 'manual'),
        run(40, 'nightly #40', 'nightly · main', { ci: 'https://ci.example.com/40', commit: 'abc1234' }),
      ];
      return pageOf(stream ? all.filter((r) => r.stream === stream) : all);
    },
    '/api/projects/1/trend': () => ({ points: [] }),
  });

  it('holds the stream in the URL: the runs and the trend are of the stream picked, and every stream again', async () => {
    const fetchImpl = api(routes());
    renderAt('/projects/1', '/projects/:projectId', <ProjectRuns />, fetchImpl);
    const select = await screen.findByRole('combobox', { name: 'Stream' });
    await waitFor(() => expect(within(select).getAllByRole('option')).toHaveLength(3));
    expect(
      within(select)
        .getAllByRole('option')
        .map((o) => o.textContent),
    ).toEqual(['every stream (2)', 'nightly · main · 40 runs', 'manual · 1 run']);
    // Every stream listed: the trend is of the default stream, the one of the project's latest run.
    await waitFor(() => expect(calls(fetchImpl, '/api/projects/1/trend').length).toBe(1));
    expect(calls(fetchImpl, '/api/projects/1/trend')[0].searchParams.get('stream')).toBe('nightly · main');
    expect(
      screen.getByRole('heading', { name: /Pass rate of nightly · main \(the default stream\)/ }),
    ).toBeTruthy();
    // Each run names its stream (a link to its runs), its CI build and when it started.
    const row = await screen.findByTestId('run-40');
    expect(within(row).getByRole('link', { name: 'stream nightly · main' }).getAttribute('href')).toBe(
      '/projects/1?stream=nightly%20%C2%B7%20main',
    );
    expect(
      within(row)
        .getByRole('link', { name: /CI build/ })
        .getAttribute('href'),
    ).toBe('https://ci.example.com/40');
    expect(within(row).getByText(/commit/)).toBeTruthy();

    const user = userEvent.setup();
    await user.selectOptions(select, 'manual');
    expect(where()).toBe('?stream=manual');
    await waitFor(() =>
      expect(calls(fetchImpl, '/api/projects/1/runs').at(-1)!.searchParams.get('stream')).toBe('manual'),
    );
    await waitFor(() =>
      expect(calls(fetchImpl, '/api/projects/1/trend').at(-1)!.searchParams.get('stream')).toBe('manual'),
    );
    await waitFor(() => expect(screen.queryByTestId('run-40')).toBeNull());
    expect(screen.getByText('1 run in manual')).toBeTruthy();

    await user.selectOptions(select, '');
    expect(where()).toBe('');
    await waitFor(() => expect(screen.getByTestId('run-40')).toBeTruthy());
  });

  it("shows a run's new failures next to its failed count, linking to them in compare; none when 0 or unknown", async () => {
    const fetchImpl = api({
      ...routes(),
      '/api/projects/1/runs': () =>
        pageOf([
          { ...run(42, 'nightly #42', 'nightly · main'), newFailures: 2 },
          { ...run(41, 'upload.xml', 'manual'), newFailures: 0 },
          run(40, 'nightly #40', 'nightly · main'),
        ]),
    });
    renderAt('/projects/1', '/projects/:projectId', <ProjectRuns />, fetchImpl);
    const row = await screen.findByTestId('run-42');
    const link = within(row).getByRole('link', { name: '2 new failures in nightly #42' });
    expect(link.getAttribute('href')).toBe('/runs/42/compare?change=NEW_FAILURE');
    expect(link.className).toContain('new-failures');
    // 0 new failures, and null (no run before to compare with): nothing.
    expect(within(screen.getByTestId('run-41')).queryByText(/new/)).toBeNull();
    expect(within(screen.getByTestId('run-40')).queryByText(/new/)).toBeNull();
  });

  it('opens on the stream of the URL, says when it has no runs, and leads back to every stream', async () => {
    const fetchImpl = api(routes());
    renderAt('/projects/1?stream=gone', '/projects/:projectId', <ProjectRuns />, fetchImpl);
    const select = await screen.findByRole('combobox', { name: 'Stream' });
    await waitFor(() => expect((select as HTMLSelectElement).value).toBe('gone'));
    expect(await screen.findByText(/No runs in the stream/)).toBeTruthy();
    // No trend of a stream the project does not have.
    expect(screen.queryByRole('heading', { name: /Pass rate/ })).toBeNull();
    await userEvent.setup().click(screen.getByRole('button', { name: 'Show every stream' }));
    expect(where()).toBe('');
  });

  it('names the one stream of a project that has one, with nothing to choose', async () => {
    const fetchImpl = api(routes([streams[0]]));
    renderAt('/projects/1', '/projects/:projectId', <ProjectRuns />, fetchImpl);
    expect(await screen.findByText('One stream:')).toBeTruthy();
    expect(screen.queryByRole('combobox', { name: 'Stream' })).toBeNull();
  });
});

describe("A retried test's row", () => {
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

  const result = (id: number, testId: number, c: Partial<Result> = {}): Result => ({
    id,
    runId: 5,
    testId,
    name: `test ${testId}`,
    suite: 'Suite',
    status: 'PASSED',
    durationMs: 10,
    message: null,
    trace: null,
    retry: 0,
    outcome: true,
    attempts: 1,
    passedOnRetry: false,
    ...c,
  });
  const detail = (
    { passedOnRetry: _, ...r }: Result,
    attempts: ResultDetail['attempts'] = [],
  ): ResultDetail => ({
    ...r,
    startedAt: null,
    attributes: {},
    attempts,
  });

  it('counts by outcome, marks a pass on retry, opens its attempts with their texts, and lists it apart', async () => {
    const flaky = result(12, 2, { retry: 1, attempts: 2, passedOnRetry: true });
    const earlier = result(11, 2, {
      status: 'FAILED',
      message: 'timeout after 5 s',
      trace: 'at Pay.java:9',
      outcome: false,
      attempts: null,
    });
    const failing = result(13, 3, { status: 'FAILED', message: 'expected 200', trace: 'at Cart.java:1' });
    const fetchImpl = api({
      '/api/runs/5': () => ({
        ...run(5, 'nightly #5', 'nightly · main'),
        counts: counts({ total: 3, passed: 2, failed: 1, passedOnRetry: 1, attempts: 4 }),
      }),
      '/api/runs/5/results': (url) =>
        url.searchParams.get('attempts') === 'all'
          ? pageOf([earlier, failing], 0, 500)
          : pageOf([result(10, 1), flaky, failing], 0, 100),
      '/api/runs/5/results/12': () =>
        detail(flaky, [
          { id: 11, status: 'FAILED', retry: 0, durationMs: 5000, startedAt: null },
          { id: 12, status: 'PASSED', retry: 1, durationMs: 10, startedAt: null },
        ]),
      '/api/runs/5/results/11': () => detail(earlier),
      '/api/runs/5/suites': () => pageOf([]),
      '/api/runs/5/failure-groups': () => pageOf([]),
    });
    renderAt('/runs/5', '/runs/:runId', <RunPage />, fetchImpl);
    expect(
      await screen.findByText(
        /3 tests: 2 passed \(1 passed on retry\), 1 failed, 0 broken, 0 skipped · 4 attempts/,
      ),
    ).toBeTruthy();

    const row = await screen.findByTestId('result-12');
    expect(within(row).getByText('passed on retry')).toBeTruthy();
    // A test that ran once has no attempts to open.
    expect(within(screen.getByTestId('result-10')).queryByRole('button')).toBeNull();
    const open = within(row).getByRole('button', { name: 'Show the 2 attempts of test 2' });
    expect(open.getAttribute('aria-expanded')).toBe('false');
    await userEvent.setup().click(open);
    expect(open.getAttribute('aria-expanded')).toBe('true');
    const list = await within(row).findByRole('list', { name: 'Attempts of test 2' });
    const items = within(list).getAllByRole('listitem');
    expect(items.map((li) => li.querySelector('.attempt-head')!.textContent)).toEqual([
      'Attempt 1failed5.00 s',
      'Attempt 2 (retry 1)passed10 msthe outcome',
    ]);
    // The failed attempt's message and trace, read from its own result.
    expect(await within(items[0]).findByText('timeout after 5 s')).toBeTruthy();
    expect(within(items[0]).getByText('at Pay.java:9')).toBeTruthy();
    expect(within(items[0]).getByRole('link', { name: 'Attempt 1' }).getAttribute('href')).toBe(
      '/runs/5/results/11',
    );

    // Its own list, marked, apart from the failures; the test that still fails is not in it.
    const retried = await screen.findByTestId('passed-on-retry');
    expect(
      within(retried)
        .getAllByRole('listitem')
        .map((li) => li.textContent),
    ).toEqual([expect.stringMatching(/^test 2 passed on retrySuite · 1 failed attempt: timeout after 5 s$/)]);
    const asked = calls(fetchImpl, '/api/runs/5/results').find(
      (u) => u.searchParams.get('attempts') === 'all',
    )!;
    expect(asked.searchParams.get('status')).toBe('FAILED,BROKEN');
  });

  it('tells a pass on retry from a retried failure, and counts a run without retries as before', () => {
    // The service says which outcomes passed after a failure: two passing attempts are a retry, not a pass on retry.
    const badge = (r: Parameters<typeof AttemptBadge>[0]['result']) =>
      render(<AttemptBadge result={r} />).container.textContent;
    expect(badge({ attempts: 3, passedOnRetry: true })).toMatch(/^passed on retry/);
    expect(badge({ attempts: 2, passedOnRetry: false })).not.toMatch(/passed on retry/);
    expect(badge({ attempts: 1, passedOnRetry: false })).toBe('');
    expect(outcomeCounts(counts())).toBe('2 tests: 1 passed, 1 failed, 0 broken, 0 skipped');
    // A test retried to the end still fails: not in the list of passes on retry.
    expect(
      retriedTests([
        result(1, 1, { status: 'FAILED', outcome: false, attempts: null }),
        result(2, 1, { status: 'FAILED', attempts: 2 }),
        result(3, 2, { status: 'BROKEN', outcome: false, attempts: null }),
        result(4, 2, { status: 'FAILED', outcome: false, attempts: null, retry: 1 }),
      ]).map((t) => [t.testId, t.failures.map((f) => f.id)]),
    ).toEqual([[2, [3, 4]]]);
  });

  it('lists the tests passed on retry by name as people read it, ten at first, then all', async () => {
    const failed = (testId: number, name: string) =>
      result(testId * 10, testId, { name, status: 'FAILED', outcome: false, attempts: null });
    // The API's text order: "case 1", "case 10", "case 11", "case 2", …
    const names = Array.from({ length: 12 }, (_, i) => `case ${i + 1}`).sort();
    expect(retriedTests(names.map((n, i) => failed(i + 1, n))).map((t) => t.name)).toEqual(
      Array.from({ length: 12 }, (_, i) => `case ${i + 1}`),
    );
    const fetchImpl = api({
      '/api/runs/5': () => ({ ...run(5, 'nightly', 'nightly'), counts: counts({ passedOnRetry: 12 }) }),
      '/api/runs/5/results': (url) =>
        url.searchParams.get('attempts') === 'all'
          ? pageOf(names.map((n, i) => failed(i + 1, n)))
          : pageOf([]),
    });
    renderAt('/runs/5', '/runs/:runId', <RunPage />, fetchImpl);
    const list = await screen.findByTestId('passed-on-retry');
    expect(
      within(list)
        .getAllByRole('link')
        .map((a) => a.textContent),
    ).toEqual(Array.from({ length: 10 }, (_, i) => `case ${i + 1}`));
    await userEvent.setup().click(screen.getByRole('button', { name: 'Show all 12' }));
    expect(within(list).getAllByRole('link')).toHaveLength(12);
    expect(screen.queryByRole('button', { name: /^Show all/ })).toBeNull();
  });
});

// The WebSocket stub's act warnings are not this file's subject.
void act;
