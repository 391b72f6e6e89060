import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Comparison, HistoryItem, ProjectRole, Result, Run, TestCase } from '../src/api/client';
import { CompareView } from '../src/pages/projects/ComparePage';
import { RunPage } from '../src/pages/projects/RunPage';
import { TestHistory } from '../src/pages/projects/TestHistory';
import { formatDate } from '../src/ui/components';
import { api, calls, json, pageOf, renderAt, requests, testCase } from './support';

/** uPlot stood in for: jsdom has no canvas (the history page draws durations). */
vi.mock('uplot', () => ({
  default: class {
    setSize() {}
    destroy() {}
  },
}));

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

const QUARANTINE = {
  since: '2026-11-24T10:00:00.000Z',
  reason: 'Times out on the shared staging database, BUG-12',
  auto: false,
  byUserId: 4,
  until: '2026-12-31T22:59:59.999Z',
};

const project = (role: ProjectRole) => () => ({ id: 1, key: 'SHOP', name: 'Shop', role, latestRun: null });

const MARKED = '/api/projects/1/tests';
const markedTests = () =>
  pageOf([
    testCase(2, 'test 2', { state: 'FLAKY', flakeRate: 0.4 }),
    testCase(3, 'test 3', { state: 'QUARANTINED', quarantine: { ...QUARANTINE, auto: true } }),
  ]);

describe('Flaky and quarantined tests where results are listed', () => {
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

  const run: Run = {
    id: 5,
    projectId: 1,
    uuid: null,
    name: 'nightly #7',
    status: 'FINISHED',
    startedAt: '2026-11-25T10:00:00.000Z',
    finishedAt: '2026-11-25T10:01:00.000Z',
    attributes: {},
    stream: 'nightly',
    counts: { total: 3, passed: 2, failed: 1, broken: 0, skipped: 0, passedOnRetry: 0, attempts: 3 },
    newFailures: null,
    gate: { status: 'OFF' },
    pinned: false,
  };
  const result = (id: number): Result => ({
    id: 10 + id,
    runId: 5,
    testId: id,
    name: `test ${id}`,
    suite: 'Checkout',
    status: id === 3 ? 'FAILED' : 'PASSED',
    durationMs: id,
    message: null,
    trace: null,
    retry: 0,
    outcome: true,
    attempts: 1,
    passedOnRetry: false,
  });

  it("marks them in the run page's results, from one request for the project's flaky and quarantined tests", async () => {
    const fetchImpl = api({
      '/api/runs/5': () => run,
      '/api/runs/5/results': () => pageOf([result(1), result(2), result(3)], 0, 100),
      '/api/runs/5/suites': () => pageOf([]),
      '/api/runs/5/failure-groups': () => pageOf([]),
      [MARKED]: markedTests,
    });
    renderAt('/runs/5', '/runs/:runId', <RunPage />, fetchImpl);
    const flaky = within(await screen.findByTestId('result-12'));
    expect((await flaky.findByText('flaky')).getAttribute('title')).toMatch(/^It both passed and failed/);
    const quarantined = within(screen.getByTestId('result-13'));
    expect(quarantined.getByText('quarantined').getAttribute('title')).toMatch(
      /^Quarantined: .* \(automatically, by the flaky tests policy\)$/,
    );
    expect(within(screen.getByTestId('result-11')).queryByText(/flaky|quarantined/)).toBeNull();
    const asked = calls(fetchImpl, MARKED);
    expect(asked.map((u) => Object.fromEntries(u.searchParams))).toEqual([
      { state: 'FLAKY,QUARANTINED', size: '500' },
    ]);
  });

  it("marks them in compare's tests", async () => {
    const head = { ...run, id: 9 };
    const comparison: Comparison = {
      head,
      base: { ...run, id: 8 },
      sameRevision: false,
      summary: { newFailures: 2, fixed: 0, stillFailing: 0, flaky: 0, added: 0, removed: 0, unchanged: 1 },
    };
    const change = (id: number) => ({
      testId: id,
      suite: 'Checkout',
      name: `test ${id}`,
      change: 'NEW_FAILURE' as const,
      baseStatus: 'PASSED' as const,
      headStatus: 'FAILED' as const,
      message: 'boom',
    });
    const fetchImpl = api({
      '/api/projects/1/runs': () => pageOf([head]),
      '/api/runs/9/compare/tests': () => pageOf([change(1), change(2), change(3)]),
      [MARKED]: markedTests,
    });
    renderAt(
      '/runs/9/compare',
      '/runs/:runId/compare',
      <CompareView comparison={comparison} change="" page={0} set={() => undefined} />,
      fetchImpl,
    );
    const rows = await screen.findAllByRole('row');
    await waitFor(() =>
      expect(rows.map((r) => r.querySelector('td')?.textContent)).toEqual([
        undefined,
        'test 1Checkout',
        'test 2flakyCheckout',
        'test 3quarantinedCheckout',
      ]),
    );
    expect(calls(fetchImpl, MARKED)).toHaveLength(1);
  });
});

describe("A test's history page", () => {
  const history = (): HistoryItem[] => [
    {
      id: 1,
      runId: 5,
      testId: 7,
      name: 'pays by card',
      suite: 'Checkout',
      status: 'FAILED',
      durationMs: 100,
      message: 'boom',
      trace: null,
      retry: 0,
      runName: 'nightly #7',
      startedAt: null,
      attempts: [],
    },
  ];
  const routes = (role: ProjectRole, test: () => unknown) => ({
    '/api/projects/1': project(role),
    '/api/projects/1/tests/7': test,
    '/api/projects/1/tests/7/history': () => pageOf(history(), 0, 100),
    '/api/projects/1/members': () =>
      pageOf([
        {
          userId: 4,
          email: 'mia@example.com',
          fullName: 'Mia Maintainer',
          role: 'MAINTAINER',
          via: 'DIRECT',
        },
      ]),
    '/api/auth/me': () => ({ id: 1, email: 'admin@tms.local', fullName: 'Admin' }),
  });
  const show = (fetchImpl: ReturnType<typeof api>) =>
    renderAt('/projects/1/tests/7', '/projects/:projectId/tests/:testId', <TestHistory />, fetchImpl);

  it('shows the failed attempts of runs it passed only on retry: in the strip, the counts and its last failure', async () => {
    const attempt = (id: number, retry: number, status: 'FAILED' | 'PASSED', message: string | null) => ({
      id,
      status,
      retry,
      durationMs: 5,
      startedAt: null,
      message,
      trace: message ? `at Pay.card(Pay.java:${id})` : null,
    });
    const retried = (id: number): HistoryItem => ({
      ...history()[0],
      id,
      runId: 10 + id,
      status: 'PASSED',
      message: null,
      runName: `nightly #${id}`,
      retry: 1,
      attempts: [
        attempt(id * 10, 0, 'FAILED', `Connection reset ${id}`),
        attempt(id * 10 + 1, 1, 'PASSED', null),
      ],
    });
    const fetchImpl = api({
      ...routes('VIEWER', () => testCase(7, 'pays by card', { state: 'FLAKY', flakeRate: 1, runs: 2 })),
      // Newest first, as the API answers.
      '/api/projects/1/tests/7/history': () => pageOf([retried(2), retried(1)], 0, 100),
    });
    show(fetchImpl);
    const strip = within(await screen.findByRole('list', { name: 'Status in each run, oldest first' }));
    expect(strip.getAllByRole('listitem').map((li) => li.className)).toEqual([
      'strip-passed strip-retried',
      'strip-passed strip-retried',
    ]);
    expect(strip.getByText('nightly #2: passed on retry')).toBeTruthy();
    expect(screen.getByText(/2 passed of 2 that ran, 2 of them only on retry/)).toBeTruthy();
    const last = within(screen.getByRole('region', { name: 'The last failure' }));
    expect(last.getByText(/attempt 1 of 2 \(failed\); it passed on retry/)).toBeTruthy();
    expect(last.getByRole('link', { name: 'nightly #2' })).toBeTruthy();
    expect(last.getByText('Connection reset 2')).toBeTruthy();
    expect(last.getByText('at Pay.card(Pay.java:20)')).toBeTruthy();
    expect(screen.queryByText('It has not failed in these runs.')).toBeNull();
  });

  it('says when no run reported a duration, rather than draw an empty chart', async () => {
    const fetchImpl = api({
      ...routes('VIEWER', () => testCase(7, 'pays by card')),
      '/api/projects/1/tests/7/history': () => pageOf([{ ...history()[0], durationMs: null }], 0, 100),
    });
    show(fetchImpl);
    expect(await screen.findByText('No durations were reported in these runs.')).toBeTruthy();
    expect(screen.getByRole('heading', { name: 'Last 1 run' })).toBeTruthy();
  });

  it('shows its state, flake rate and quarantine: the reason, who set it, since and until', async () => {
    const fetchImpl = api(
      routes('VIEWER', () =>
        testCase(7, 'pays by card', {
          state: 'QUARANTINED',
          flakeRate: 0.3,
          runs: 11,
          lastFailedAt: '2026-11-25T10:00:00.000Z',
          quarantine: QUARANTINE,
        }),
      ),
    );
    show(fetchImpl);
    const health = within(await screen.findByRole('region', { name: 'Health' }));
    expect(screen.getByText('quarantined', { selector: '.state-badge' })).toBeTruthy();
    expect(health.getByText('30 %')).toBeTruthy();
    expect(health.getByText('over 11 runs')).toBeTruthy();
    const quarantine = within(health.getByRole('group', { name: 'Quarantine' }));
    expect(quarantine.getByText(QUARANTINE.reason)).toBeTruthy();
    await waitFor(() =>
      expect(quarantine.getByText(/^By Mia Maintainer \(mia@example.com\), since/)).toBeTruthy(),
    );
    expect(quarantine.getByText(/since/).textContent).toBe(
      `By Mia Maintainer (mia@example.com), since ${formatDate(QUARANTINE.since)}; it ends by itself after ${formatDate(QUARANTINE.until)}.`,
    );
    // A viewer reads it, and has nothing to act with.
    expect(screen.queryByRole('button', { name: /Release|Quarantine/ })).toBeNull();
    expect(calls(fetchImpl, '/api/projects/1/members')[0].searchParams.get('size')).toBe('500');
  });

  it('says an automatic quarantine was the policy, and reads no members for it', async () => {
    const fetchImpl = api(
      routes('VIEWER', () =>
        testCase(7, 'pays by card', {
          state: 'QUARANTINED',
          quarantine: { ...QUARANTINE, auto: true, byUserId: null, until: null },
        }),
      ),
    );
    show(fetchImpl);
    const health = within(await screen.findByRole('region', { name: 'Health' }));
    expect(health.getByText(/^Automatically, by the flaky tests policy, since/).textContent).toContain(
      'released after enough passing runs in a row',
    );
    expect(document.querySelector('.state-badge')!.textContent).toBe('quarantined · auto');
    expect(calls(fetchImpl, '/api/projects/1/members')).toHaveLength(0);
  });

  it('names "user #id" when the one who set it is not a member', async () => {
    const fetchImpl = api(
      routes('VIEWER', () =>
        testCase(7, 'pays by card', { state: 'QUARANTINED', quarantine: { ...QUARANTINE, byUserId: 99 } }),
      ),
    );
    show(fetchImpl);
    const health = within(await screen.findByRole('region', { name: 'Health' }));
    await waitFor(() => expect(calls(fetchImpl, '/api/projects/1/members')).toHaveLength(1));
    expect(await health.findByText(/^By user #99, since/)).toBeTruthy();
  });

  it('lets a MAINTAINER release it, and quarantine it again with a reason', async () => {
    let quarantine: TestCase['quarantine'] = { ...QUARANTINE, byUserId: 1 };
    const fetchImpl = api({
      ...routes('MAINTAINER', () =>
        testCase(7, 'pays by card', { state: quarantine ? 'QUARANTINED' : 'FLAKY', quarantine }),
      ),
      'DELETE /api/projects/1/tests/7/quarantine': () => {
        quarantine = null;
        return json(204);
      },
      'PUT /api/projects/1/tests/7/quarantine': () => {
        quarantine = { ...QUARANTINE, reason: 'again', byUserId: 1, until: null };
        return testCase(7, 'pays by card', { state: 'QUARANTINED', quarantine });
      },
    });
    show(fetchImpl);
    const health = within(await screen.findByRole('region', { name: 'Health' }));
    expect(await health.findByText(/^By you, since/)).toBeTruthy();
    const user = userEvent.setup();
    await user.click(health.getByRole('button', { name: 'Release from quarantine' }));
    expect(await health.findByText('The test is released from quarantine.')).toBeTruthy();
    expect(requests(fetchImpl, 'DELETE', '/api/projects/1/tests/7/quarantine')).toHaveLength(1);
    await user.click(await health.findByRole('button', { name: 'Quarantine…' }));
    await user.type(health.getByLabelText('Reason'), 'again');
    await user.click(health.getByRole('button', { name: 'Quarantine' }));
    expect(await health.findByText('The test is quarantined.')).toBeTruthy();
    const [put] = requests(fetchImpl, 'PUT', '/api/projects/1/tests/7/quarantine');
    expect(JSON.parse(String(put[1]!.body))).toEqual({ reason: 'again' });
    expect(await health.findByText('again')).toBeTruthy();
  }, 15_000);
});
