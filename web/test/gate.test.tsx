import { act, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Run, RunGate as Gate } from '../src/api/client';
import { ProjectRuns } from '../src/pages/projects/ProjectRuns';
import { RunPage } from '../src/pages/projects/RunPage';
import { RunGate } from '../src/pages/projects/run/RunGate';
import { GateForm } from '../src/pages/projects/settings/GateForm';
import { actualOf, expectedOf } from '../src/ui/gate';
import { api, calls, json, pageOf, renderAt } from './support';

const DEFAULT_GATE = {
  enabled: true,
  maxFailed: 0,
  minPassRate: null,
  minTotal: null,
  noNewFailures: false,
  ignoreQuarantined: true,
  ignoreKnownIssues: true,
};

const run = (id: number, gate: Run['gate']['status'], overrides: Partial<Run> = {}): Run => ({
  id,
  projectId: 1,
  uuid: null,
  name: `nightly #${id}`,
  status: 'FINISHED',
  startedAt: '2026-11-25T10:00:00.000Z',
  finishedAt: '2026-11-25T10:01:00.000Z',
  attributes: {},
  counts: { total: 10, passed: 7, failed: 2, broken: 1, skipped: 0, passedOnRetry: 0, attempts: 10 },
  stream: 'nightly',
  newFailures: 1,
  pinned: false,
  gate: { status: gate },
  ...overrides,
});

const failedGate: Gate = {
  status: 'FAILED',
  evaluatedAt: '2026-11-25T10:01:01.000Z',
  conditions: [
    { name: 'maxFailed', expected: 0, actual: 3, passed: false },
    { name: 'minPassRate', expected: 90, actual: 70, passed: false },
    { name: 'minTotal', expected: 5, actual: 10, passed: true },
    { name: 'noNewFailures', expected: 0, actual: 1, passed: false },
  ],
  ignored: { quarantined: 2, knownIssues: 1 },
};

/** The run page's other reads, answered empty. */
const runPageRoutes = (r: Run, gate?: () => unknown) => ({
  [`/api/runs/${r.id}`]: () => r,
  [`/api/runs/${r.id}/results`]: () => pageOf([]),
  [`/api/runs/${r.id}/suites`]: () => pageOf([]),
  [`/api/runs/${r.id}/failure-groups`]: () => pageOf([]),
  ...(gate ? { [`/api/runs/${r.id}/gate`]: gate } : {}),
});

/** The browser's WebSocket stood in for: the test plays the service's side of /ws. */
class FakeSocket {
  static OPEN = 1;
  static all: FakeSocket[] = [];
  readyState = 0;
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
  send() {}
  close() {
    this.readyState = 3;
  }
  receive(frame: object) {
    act(() => this.onmessage?.({ data: JSON.stringify(frame) }));
  }
}

// The page renders in jsdom in a second or two; on a machine shared by several builds, more than the default 5 s.
vi.setConfig({ testTimeout: 15_000 });

beforeEach(() => {
  FakeSocket.all = [];
  vi.stubGlobal('WebSocket', FakeSocket);
});
afterEach(() => vi.unstubAllGlobals());

/** The run page's gate section, once shown (by its landmark's label; role queries over a whole page are slow). */
const gateSection = () =>
  waitFor(() => {
    const section = document.querySelector<HTMLElement>('section[aria-labelledby="gate-title"]');
    expect(section).not.toBeNull();
    return section!;
  });

describe("The run page's quality gate", () => {
  it('names each condition with what was needed and what the run had, what failed, and what was left out', async () => {
    const r = run(5, 'FAILED');
    // The section alone (the whole page's render is tested below).
    renderAt('/runs/5', '/runs/:runId', <RunGate run={r} />, api({ '/api/runs/5/gate': () => failedGate }));
    const section = await gateSection();
    expect(within(section).getByRole('heading', { level: 2 }).textContent).toContain('Gate failed');
    await within(section).findByRole('table');
    expect(section.textContent).toContain(
      '3 conditions of 4 not met: failed tests, pass rate, new failures.',
    );

    const row = (name: string) =>
      within(section).getByRole('rowheader', { name }).closest('tr')!.textContent!.replace(/\s+/g, ' ');
    expect(row('Failed tests')).toBe('Failed testsnone3 · the failures of nightly #5✗ not met');
    expect(row('Pass rate')).toContain('at least 90 %70 %');
    expect(row('Tests run')).toBe('Tests runat least 510✓ met');
    expect(row('New failures')).toContain('none1');

    // The way to what failed: the run's failures, the new ones in compare.
    expect(
      within(section).getByRole('link', { name: 'the new failures of nightly #5' }).getAttribute('href'),
    ).toBe('/runs/5/compare?change=NEW_FAILURE');
    expect(
      within(section).getAllByRole('link', { name: 'the failures of nightly #5' })[0].getAttribute('href'),
    ).toBe('/runs/5?status=FAILED%2CBROKEN');

    // What the gate did not count, and why.
    const ignored = within(section).getByRole('heading', { name: 'Not counted' }).parentElement!;
    expect(ignored.textContent).toContain('2 results of quarantined tests');
    expect(ignored.textContent).toContain('1 failure with a known issue');
  });

  it('says a passed gate met every condition, and leaves out "Not counted" when nothing was', async () => {
    const r = run(6, 'PASSED');
    const gate: Gate = {
      status: 'PASSED',
      evaluatedAt: '2026-11-25T10:01:01.000Z',
      conditions: [{ name: 'maxFailed', expected: 3, actual: 3, passed: true }],
      ignored: { quarantined: 0, knownIssues: 0 },
    };
    renderAt('/runs/6', '/runs/:runId', <RunPage />, api(runPageRoutes(r, () => gate)));
    const section = await gateSection();
    expect(await within(section).findByText(/All 1 condition met/)).toBeTruthy();
    expect(within(section).queryByRole('heading', { name: 'Not counted' })).toBeNull();
  });

  it('waits for a run in progress, and says when the gate is off, without asking for it', async () => {
    const inProgress = run(7, 'PENDING', { status: 'IN_PROGRESS', finishedAt: null });
    const fetchImpl = api(runPageRoutes(inProgress));
    renderAt('/runs/7', '/runs/:runId', <RunPage />, fetchImpl);
    const section = await gateSection();
    expect(section.textContent).toContain('Gate pending');
    expect(section.textContent).toContain('Decided when the run finishes.');
    expect(calls(fetchImpl, '/api/runs/7/gate')).toHaveLength(0);
  });

  it('says the gate is off when the project turned it off', async () => {
    const fetchImpl = api(runPageRoutes(run(8, 'OFF')));
    renderAt('/runs/8', '/runs/:runId', <RunPage />, fetchImpl);
    const section = await gateSection();
    expect(section.textContent).toContain('turned its quality gate off');
    expect(calls(fetchImpl, '/api/runs/8/gate')).toHaveLength(0);
  });

  it('reads the gate again when the project announces run.gate', async () => {
    // A finished run whose gate is being evaluated as the page opens.
    let served: Gate = { ...failedGate, status: 'PENDING', evaluatedAt: null, conditions: [] };
    let shown: Run = run(9, 'PENDING');
    const fetchImpl = api({
      ...runPageRoutes(shown),
      '/api/runs/9': () => shown,
      '/api/runs/9/gate': () => served,
    });
    renderAt('/runs/9', '/runs/:runId', <RunPage />, fetchImpl);
    const section = await gateSection();
    expect(await within(section).findByText(/Being evaluated/)).toBeTruthy();
    served = failedGate;
    shown = run(9, 'FAILED');
    await waitFor(() => expect(FakeSocket.all).toHaveLength(1));
    FakeSocket.all[0].receive({
      type: 'event',
      projectId: 1,
      event: 'run.gate',
      data: { runId: 9, gate: failedGate },
      at: '',
    });
    expect(await within(section).findByRole('table')).toBeTruthy();
    await waitFor(() =>
      expect(within(section).getByRole('heading', { level: 2 }).textContent).toContain('Gate failed'),
    );
  });
});

describe("The runs list's gate badge", () => {
  it('marks a passed or failed gate and a finished run not yet evaluated, nothing when off or in progress', async () => {
    const runs = [
      run(1, 'PASSED'),
      run(2, 'FAILED'),
      run(3, 'PENDING'),
      run(4, 'PENDING', { status: 'IN_PROGRESS', finishedAt: null }),
      run(5, 'OFF'),
    ];
    const fetchImpl = api({
      '/api/projects/1': () => ({ id: 1, key: 'P', name: 'Shop', role: 'OWNER', latestRun: null }),
      '/api/projects/1/runs': () => pageOf(runs),
      '/api/projects/1/trend': () => ({ points: [] }),
    });
    renderAt('/projects/1', '/projects/:projectId', <ProjectRuns />, fetchImpl);
    // Each row's links (role queries over the whole page are slow in jsdom).
    const linksOf = (id: number) =>
      within(screen.getByTestId(`run-${id}`))
        .getAllByRole('link')
        .map((a) => a.getAttribute('aria-label') ?? a.textContent);
    await screen.findByTestId('run-5');
    const passed = within(screen.getByTestId('run-1')).getByRole('link', { name: 'Gate passed: nightly #1' });
    expect(passed.getAttribute('href')).toBe('/runs/1#gate-title');
    expect(passed.textContent).toContain('gate');
    expect(linksOf(2)).toContain('Gate failed: nightly #2');
    expect(within(screen.getByTestId('run-2')).getByText('gate failed')).toBeTruthy();
    expect(linksOf(3)).toContain('Gate pending: nightly #3');
    expect(linksOf(4).filter((l) => l?.startsWith('Gate'))).toEqual([]);
    expect(linksOf(5).filter((l) => l?.startsWith('Gate'))).toEqual([]);

    // A gate evaluated again (a triage, a quarantine) moves the badge live.
    await waitFor(() => expect(FakeSocket.all).toHaveLength(1));
    FakeSocket.all[0].receive({
      type: 'event',
      projectId: 1,
      event: 'run.gate',
      data: { runId: 2, gate: { ...failedGate, status: 'PASSED' } },
      at: '',
    });
    await waitFor(() => expect(linksOf(2)).toContain('Gate passed: nightly #2'));
  });
});

describe('Gate conditions in words', () => {
  it('says what each condition needs and what the run had', () => {
    expect(expectedOf({ name: 'maxFailed', expected: 0 })).toBe('none');
    expect(expectedOf({ name: 'maxFailed', expected: 1200 })).toBe('at most 1,200');
    expect(expectedOf({ name: 'minPassRate', expected: 99.5 })).toBe('at least 99.5\u00a0%');
    expect(expectedOf({ name: 'minTotal', expected: 10 })).toBe('at least 10');
    expect(expectedOf({ name: 'noNewFailures', expected: 0 })).toBe('none');
    expect(actualOf({ name: 'minPassRate', actual: 66.66 })).toBe('66.66\u00a0%');
    expect(actualOf({ name: 'minPassRate', actual: null })).toBe('none (nothing passed or failed)');
    expect(actualOf({ name: 'maxFailed', actual: 3 })).toBe('3');
  });
});

describe("The settings' gate form", () => {
  const saved = { gate: { ...DEFAULT_GATE } };
  const settingsRoutes = (answer: (body: unknown) => unknown) => {
    const sent: unknown[] = [];
    const fetchImpl = api({
      'PATCH /api/projects/1/settings': () => answer(sent.at(-1)),
    });
    const plain = fetchImpl.getMockImplementation()!;
    fetchImpl.mockImplementation(async (input, init) => {
      if (init?.method === 'PATCH') {
        sent.push(JSON.parse(String(init.body)));
      }
      return plain(input, init);
    });
    return { fetchImpl, sent };
  };

  it('sends only what changed, an emptied box as not checked, and says it is saved', async () => {
    const { fetchImpl, sent } = settingsRoutes(() => saved);
    renderAt(
      '/projects/1/settings',
      '/projects/:projectId/settings',
      <GateForm projectId={1} settings={DEFAULT_GATE} />,
      fetchImpl,
    );
    const user = userEvent.setup();
    expect((screen.getByLabelText('Most failed tests') as HTMLInputElement).value).toBe('0');
    expect(screen.getByRole('button', { name: 'Save the gate' }).hasAttribute('disabled')).toBe(true);
    await user.clear(screen.getByLabelText('Most failed tests'));
    await user.type(screen.getByLabelText('Least pass rate (%)'), '97.5');
    await user.click(screen.getByLabelText('Fail a run with a new failure'));
    await user.click(screen.getByRole('button', { name: 'Save the gate' }));
    await screen.findByText(/The quality gate is saved/);
    expect(sent).toEqual([{ gate: { maxFailed: null, minPassRate: 97.5, noNewFailures: true } }]);
  });

  it('refuses what is not a count or a percentage before sending, and shows the API’s word beside its field', async () => {
    const { fetchImpl, sent } = settingsRoutes(() =>
      json(400, {
        status: 400,
        error: 'Bad Request',
        message: 'gate.minTotal must be a whole number from 0 to 1000000000, or null',
      }),
    );
    renderAt(
      '/projects/1/settings',
      '/projects/:projectId/settings',
      <GateForm projectId={1} settings={DEFAULT_GATE} />,
      fetchImpl,
    );
    const user = userEvent.setup();
    await user.type(screen.getByLabelText('Least pass rate (%)'), '120');
    await user.click(screen.getByRole('button', { name: 'Save the gate' }));
    expect(await screen.findByText('A number from 0 to 100, or empty for no limit.')).toBeTruthy();
    expect(screen.getByLabelText('Least pass rate (%)').getAttribute('aria-invalid')).toBe('true');
    expect(sent).toEqual([]);

    await user.clear(screen.getByLabelText('Least pass rate (%)'));
    await user.type(screen.getByLabelText('Least tests run'), '10');
    await user.click(screen.getByRole('button', { name: 'Save the gate' }));
    expect(await screen.findByText('Must be a whole number from 0 to 1000000000, or null.')).toBeTruthy();
    expect(screen.getByLabelText('Least tests run').getAttribute('aria-invalid')).toBe('true');
    expect(sent).toEqual([{ gate: { minTotal: 10 } }]);
  });
});
