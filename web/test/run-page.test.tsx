import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { act, render, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { MemoryRouter, Route, Routes, useLocation } from 'react-router';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { ResultDetail, Run, TrendPoint } from '../src/api/client';
import { Session } from '../src/api/session';
import { ResultPage } from '../src/pages/projects/ResultPage';
import { SessionProvider } from '../src/session-context';
import { RUN_STEPS, runSplits } from '../src/ui/chart-theme';
import { PassRateChart } from '../src/ui/PassRateChart';

/** uPlot stood in for: jsdom has no canvas. Each chart made is kept with the options it was given. */
const charts = vi.hoisted(() => [] as { opts: Record<string, unknown>; destroyed: boolean }[]);
vi.mock('uplot', () => ({
  default: class {
    private readonly made: { opts: Record<string, unknown>; destroyed: boolean };
    constructor(opts: Record<string, unknown>) {
      this.made = { opts, destroyed: false };
      charts.push(this.made);
    }
    setSize() {}
    destroy() {
      this.made.destroyed = true;
    }
  },
}));

const json = (status: number, body: unknown) =>
  new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json' } });

/** A fetch answering each API path through `routes`: a body as 200, a Response as it is, a promise when it comes. */
function api(routes: Record<string, () => unknown>) {
  return vi.fn(async (input: RequestInfo | URL) => {
    const url = new URL(String(input), 'http://localhost');
    if (url.pathname === '/api/auth/refresh') {
      return json(200, { accessToken: 'jwt', tokenType: 'Bearer', expiresIn: 900 });
    }
    const route = routes[url.pathname];
    const answer = route
      ? await route()
      : json(404, { status: 404, error: 'Not Found', message: url.pathname });
    return answer instanceof Response ? answer : json(200, answer);
  });
}

/** Where the router went: path and query. */
function Where() {
  const location = useLocation();
  return <output data-testid="where">{location.pathname + location.search}</output>;
}

function renderResult(fetchImpl: ReturnType<typeof api>, state: unknown = { search: '?status=FAILED' }) {
  const session = new Session({
    fetch: fetchImpl as unknown as typeof fetch,
    locks: { request: (_n, cb) => cb() },
  });
  const queries = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  render(
    <QueryClientProvider client={queries}>
      <SessionProvider session={session}>
        <MemoryRouter initialEntries={[{ pathname: '/runs/5/results/3', state }]}>
          <Routes>
            <Route path="/runs/:runId/results/:resultId" element={<ResultPage />} />
            <Route path="/runs/:runId" element={<p>The run page</p>} />
          </Routes>
          <Where />
        </MemoryRouter>
      </SessionProvider>
    </QueryClientProvider>,
  );
}

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
  counts: { total: 2, passed: 1, failed: 1, broken: 0, skipped: 0, passedOnRetry: 0, attempts: 2 },
  newFailures: null,
  gate: { status: 'OFF' },
  pinned: false,
};

const TRACE =
  'org.opentest4j.AssertionFailedError: expected: <200> but was: <500>\n' +
  '\tat com.example.checkout.payments.CardPaymentServiceIntegrationTest.paysByCardWithThreeDSecure(CardPaymentServiceIntegrationTest.java:42)';

const detail = (changes: Partial<ResultDetail> = {}): ResultDetail => ({
  id: 3,
  runId: 5,
  testId: 9,
  name: 'pays by card',
  suite: 'Checkout',
  status: 'PASSED',
  durationMs: 1200,
  message: 'expected: <200> but was: <500>',
  trace: TRACE,
  retry: 1,
  outcome: true,
  startedAt: null,
  attributes: { browser: 'firefox', 'build-url': 'https://ci.example.com/job/123' },
  attempts: [
    { id: 1, status: 'FAILED', retry: 0, durationMs: 900, startedAt: null },
    { id: 3, status: 'PASSED', retry: 1, durationMs: 1200, startedAt: null },
  ],
  ...changes,
});

describe("A result's own page", () => {
  afterEach(() => vi.unstubAllGlobals());

  it('shows the message and trace whole, the attributes and the attempts, and leads back to the filtered results', async () => {
    const fetchImpl = api({ '/api/runs/5': () => run, '/api/runs/5/results/3': () => detail() });
    renderResult(fetchImpl);
    expect(await screen.findByRole('heading', { level: 1, name: 'pays by card' })).toBeTruthy();
    expect(screen.getByTestId('trace').textContent).toBe(TRACE);
    expect(screen.getByTestId('message').textContent).toBe('expected: <200> but was: <500>');
    const attributes = screen.getByRole('region', { name: 'Attributes' });
    expect(within(attributes).getByText('build-url').nextSibling?.textContent).toBe(
      'https://ci.example.com/job/123',
    );
    const attempts = within(screen.getByRole('region', { name: 'Attempts in this run' })).getAllByRole(
      'listitem',
    );
    expect(attempts.map((a) => a.textContent)).toEqual([
      'Attempt 1: failed · 900 ms',
      'Attempt 2 (retry 1): passed · 1.20 s (this one)',
    ]);
    expect(within(attempts[0]).getByRole('link').getAttribute('href')).toBe('/runs/5/results/1');
    expect(within(attempts[1]).queryByRole('link')).toBeNull();
    const back = await screen.findByRole('link', { name: '← Results of nightly #7' });
    expect(back.getAttribute('href')).toBe('/runs/5?status=FAILED');
    expect(screen.getByRole('link', { name: 'History of this test' }).getAttribute('href')).toBe(
      '/projects/1/tests/9',
    );
    await userEvent.setup().click(back);
    expect(screen.getByTestId('where').textContent).toBe('/runs/5?status=FAILED');
  });

  it('copies the trace through the Clipboard API, through the copy command where that is refused, or says it could not', async () => {
    const writeText = vi.fn(async (_text: string) => undefined);
    vi.stubGlobal('isSecureContext', true);
    const copied: string[] = [];
    const execCommand = vi.fn((command: string) => {
      const area = document.activeElement as HTMLTextAreaElement;
      copied.push(`${command}: ${area.value.slice(area.selectionStart, area.selectionEnd)}`);
      return true;
    });
    Object.defineProperty(document, 'execCommand', { value: execCommand, configurable: true });
    renderResult(api({ '/api/runs/5': () => run, '/api/runs/5/results/3': () => detail() }));
    // (After user-event's setup, which puts a clipboard of its own in place.)
    const user = userEvent.setup();
    Object.defineProperty(navigator, 'clipboard', { value: { writeText }, configurable: true });
    const copy = await screen.findByRole('button', { name: 'Copy the stack trace' });

    await user.click(copy);
    expect(writeText).toHaveBeenCalledWith(TRACE);
    expect(await screen.findByText('Copied the stack trace.')).toBeTruthy();
    expect(execCommand).not.toHaveBeenCalled();

    // Refused (no permission): the selected text area and the copy command, which leave nothing behind.
    writeText.mockRejectedValueOnce(new DOMException('denied', 'NotAllowedError'));
    await user.click(screen.getByRole('button', { name: 'Copy the message' }));
    await waitFor(() => expect(copied).toEqual(['copy: expected: <200> but was: <500>']));
    expect(await screen.findByText('Copied the message.')).toBeTruthy();
    expect(document.querySelector('textarea')).toBeNull();
    expect(document.activeElement?.textContent).toBe('Copy the message');

    // Neither allowed: the page says so.
    writeText.mockRejectedValueOnce(new DOMException('denied', 'NotAllowedError'));
    execCommand.mockReturnValueOnce(false);
    await user.click(copy);
    expect(
      await screen.findByText('The browser did not allow copying: select the text instead.'),
    ).toBeTruthy();
  });

  it("leads from a failing result to its failure across runs, with the failure's triage", async () => {
    renderResult(
      api({
        '/api/runs/5': () => run,
        '/api/runs/5/results/3': () =>
          detail({ failure: { signatureId: 12, isNew: true, triage: 'PRODUCT_BUG', issue: null } }),
      }),
    );
    const link = await screen.findByRole('link', { name: '#12' });
    expect(link.getAttribute('href')).toBe(`/projects/${run.projectId}/failures/12`);
    expect(screen.getByText('product bug', { exact: false, selector: '.triage' })).toBeTruthy();
  });

  it('says so when a result reported no message or trace, and shows no empty sections', async () => {
    renderResult(
      api({
        '/api/runs/5': () => run,
        '/api/runs/5/results/3': () =>
          detail({ message: null, trace: null, attributes: {}, attempts: [detail().attempts[1]] }),
      }),
    );
    expect(await screen.findByText('No message or stack trace was reported for this result.')).toBeTruthy();
    expect(screen.queryByRole('region', { name: 'Attributes' })).toBeNull();
    expect(screen.queryByRole('region', { name: 'Attempts in this run' })).toBeNull();
    expect(screen.queryByRole('button', { name: /^Copy/ })).toBeNull();
  });

  it('says what it waits for, and the API’s message when the result is not found', async () => {
    let answer!: (response: Response) => void;
    renderResult(
      api({
        '/api/runs/5': () => run,
        '/api/runs/5/results/3': () => new Promise<Response>((resolve) => (answer = resolve)),
      }),
      null,
    );
    expect(await screen.findByText(/Loading the result/)).toBeTruthy();
    await act(async () =>
      answer(json(404, { status: 404, error: 'Not Found', message: 'Result 3 not found in run 5' })),
    );
    expect((await screen.findByRole('alert')).textContent).toBe('Result 3 not found in run 5');
    expect(screen.getByRole('heading', { level: 1 }).textContent).toBe('Result not found');
    // Opened from a link elsewhere (no filters handed over): back to the run as it opens.
    expect((await screen.findByRole('link', { name: '← Results of nightly #7' })).getAttribute('href')).toBe(
      '/runs/5',
    );
  });
});

describe('The charts over runs', () => {
  /** The system's colour scheme, as matchMedia reports it; `flip` switches it and tells the listeners. */
  const scheme = { dark: false, listeners: new Set<() => void>() };
  beforeEach(() => {
    charts.length = 0;
    scheme.dark = false;
    scheme.listeners.clear();
    vi.stubGlobal('matchMedia', (query: string) => ({
      get matches() {
        return query.includes('dark') && scheme.dark;
      },
      addEventListener: (_: string, fn: () => void) => scheme.listeners.add(fn),
      removeEventListener: (_: string, fn: () => void) => scheme.listeners.delete(fn),
    }));
  });
  afterEach(() => {
    vi.unstubAllGlobals();
    document.documentElement.style.removeProperty('--chart-text');
    document.documentElement.style.removeProperty('--chart-grid');
  });

  it('labels and grids whole runs only, however the axis is stepped', () => {
    expect(runSplits(0.5, 10.5, 1)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(runSplits(0.5, 30.5, 5)).toEqual([5, 10, 15, 20, 25, 30]);
    // A fractional step (uPlot's own on a range padded by half a run) still gives whole runs.
    for (const step of [0.5, 2.5]) {
      const splits = runSplits(0.5, 10.5, step);
      expect(splits.length).toBeGreaterThan(0);
      expect(splits.every(Number.isInteger)).toBe(true);
    }
    expect(RUN_STEPS.every(Number.isInteger)).toBe(true);
  });

  it("draws its axes in the scheme's colours from the CSS variables, and again when the scheme changes", () => {
    const root = document.documentElement.style;
    root.setProperty('--chart-text', '#5c6370');
    root.setProperty('--chart-grid', 'rgba(0, 0, 0, 0.1)');
    const points: TrendPoint[] = [1, 2, 3, 4].map((i) => ({
      runId: i,
      name: `nightly ${i}`,
      status: 'FINISHED',
      stream: 'nightly',
      startedAt: '2026-11-25T10:00:00.000Z',
      durationMs: 1000,
      counts: { total: 4, passed: i, failed: 4 - i, broken: 0, skipped: 0, passedOnRetry: 0, attempts: 4 },
      passRate: i / 4,
    }));
    render(<PassRateChart points={points} />);
    type Axis = {
      stroke: string;
      grid: { stroke: string };
      ticks: { stroke: string };
      incrs?: number[];
      splits: (...a: unknown[]) => number[];
    };
    const axes = () => charts.at(-1)!.opts.axes as Axis[];
    expect(charts).toHaveLength(1);
    expect(axes().map((a) => [a.stroke, a.grid.stroke, a.ticks.stroke])).toEqual([
      ['#5c6370', 'rgba(0, 0, 0, 0.1)', 'rgba(0, 0, 0, 0.1)'],
      ['#5c6370', 'rgba(0, 0, 0, 0.1)', 'rgba(0, 0, 0, 0.1)'],
    ]);
    expect(axes()[0].splits(undefined, 0, 0.5, 4.5, 1)).toEqual([1, 2, 3, 4]);

    // The system turns dark: the stylesheet's variables change with it, and the chart is drawn again in them.
    root.setProperty('--chart-text', '#c3c7cf');
    root.setProperty('--chart-grid', 'rgba(255, 255, 255, 0.12)');
    scheme.dark = true;
    act(() => scheme.listeners.forEach((fn) => fn()));
    expect(charts).toHaveLength(2);
    expect(charts[0].destroyed).toBe(true);
    expect(axes().map((a) => [a.stroke, a.grid.stroke])).toEqual([
      ['#c3c7cf', 'rgba(255, 255, 255, 0.12)'],
      ['#c3c7cf', 'rgba(255, 255, 255, 0.12)'],
    ]);
  });
});
