import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { ProjectRole, ProjectSettings, Run } from '../src/api/client';
import { RunsTable } from '../src/pages/projects/ProjectRuns';
import { RunPage } from '../src/pages/projects/RunPage';
import { RetentionPage } from '../src/pages/projects/retention/RetentionPage';
import { boundOf, previewText } from '../src/pages/projects/retention/RetentionEditor';
import { api, calls, json, pageOf, renderAt, requests } from './support';

const settings = (retention: ProjectSettings['retention']): ProjectSettings => ({
  flaky: { window: 30, minRuns: 5, flipRate: 0.2, autoQuarantine: false, releaseAfterPasses: 10 },
  gate: {
    enabled: true,
    maxFailed: 0,
    minPassRate: null,
    minTotal: null,
    noNewFailures: false,
    ignoreQuarantined: true,
    ignoreKnownIssues: true,
  },
  triage: { similarity: 0.8 },
  retention,
  streams: { attributes: ['branch', 'env'], default: null },
});

const run = (id: number, changes: Partial<Run> = {}): Run => ({
  id,
  projectId: 1,
  uuid: null,
  name: `nightly #${id}`,
  status: 'FINISHED',
  startedAt: '2026-11-25T10:00:00.000Z',
  finishedAt: '2026-11-25T10:01:00.000Z',
  attributes: {},
  stream: 'nightly',
  counts: { total: 2, passed: 1, failed: 1, broken: 0, skipped: 0, passedOnRetry: 0, attempts: 2 },
  newFailures: null,
  pinned: false,
  gate: { status: 'OFF' },
  ...changes,
});

function retentionApi(
  role: ProjectRole,
  stored: ProjectSettings['retention'],
  patch?: () => Response | object,
) {
  return api({
    '/api/projects/1': () => ({ id: 1, key: 'SHOP', name: 'Shop', role, latestRun: null }),
    '/api/projects/1/settings': () => settings(stored),
    '/api/projects/1/retention/preview': (url) => {
      const keepRuns = url.searchParams.get('keepRuns');
      const keepDays = url.searchParams.get('keepDays');
      if (keepRuns === '20') {
        return { runs: 12, results: 480_000 };
      }
      if (keepDays === '30') {
        return { runs: 1, results: 1 };
      }
      return { runs: 0, results: 0 };
    },
    'PATCH /api/projects/1/settings': () => patch?.() ?? settings(stored),
    'POST /api/projects/1/retention/run': () => ({ runsDeleted: 12, resultsDeleted: 480_000 }),
  });
}

describe('The retention section', { timeout: 20_000 }, () => {
  it('says what the policy typed would remove before it is saved, then saves only the retention group', async () => {
    const user = userEvent.setup();
    const fetchImpl = retentionApi('OWNER', { keepDays: null, keepRuns: null }, () =>
      settings({ keepDays: null, keepRuns: 20 }),
    );
    renderAt('/projects/1/retention', '/projects/:projectId/retention', <RetentionPage />, fetchImpl);
    const form = await screen.findByRole('form', { name: 'Retention policy' });
    expect(within(form).getByRole('status').textContent).toBe('No limit: every run is kept.');

    await user.type(within(form).getByLabelText('Keep at most (finished runs)'), '20');
    await waitFor(() =>
      expect(within(form).getByRole('status').textContent).toBe('12 runs, 480,000 results would be removed'),
    );
    const asked = calls(fetchImpl, '/api/projects/1/retention/preview').at(-1)!;
    expect(Object.fromEntries(asked.searchParams)).toEqual({ keepRuns: '20' });
    // Nothing is saved by the preview.
    expect(requests(fetchImpl, 'PATCH', '/api/projects/1/settings')).toHaveLength(0);

    await user.click(within(form).getByRole('button', { name: 'Save retention' }));
    expect(await screen.findByText('Retention saved.')).toBeTruthy();
    const [[, init]] = requests(fetchImpl, 'PATCH', '/api/projects/1/settings');
    expect(JSON.parse(String(init!.body))).toEqual({ retention: { keepDays: null, keepRuns: 20 } });
  });

  it('refuses a bound out of 1..100,000 beside its field, and shows the API’s word on a field it names', async () => {
    const user = userEvent.setup();
    const fetchImpl = retentionApi('OWNER', { keepDays: 30, keepRuns: null }, () =>
      json(400, {
        status: 400,
        error: 'Bad Request',
        message: 'retention.keepDays must be a whole number from 1 to 100000, or null',
      }),
    );
    renderAt('/projects/1/retention', '/projects/:projectId/retention', <RetentionPage />, fetchImpl);
    const days = await screen.findByLabelText('Keep runs for (days)');
    expect((days as HTMLInputElement).value).toBe('30');
    await waitFor(() =>
      expect(screen.getByRole('status').textContent).toBe('1 run, 1 result would be removed'),
    );

    await user.clear(days);
    await user.type(days, '0');
    expect(screen.getByText('A whole number of days from 1 to 100,000, or empty.')).toBeTruthy();
    await user.click(screen.getByRole('button', { name: 'Save retention' }));
    expect(requests(fetchImpl, 'PATCH', '/api/projects/1/settings')).toHaveLength(0);

    // The API's own refusal (here, as if another bound applied) is shown beside the field it names.
    await user.clear(days);
    await user.type(days, '45');
    await user.click(screen.getByRole('button', { name: 'Save retention' }));
    expect(await screen.findByText('Must be a whole number from 1 to 100000, or null.')).toBeTruthy();
  });

  it('runs a pass now for an owner once the policy is saved, and says what it removed', async () => {
    const user = userEvent.setup();
    const fetchImpl = retentionApi('OWNER', { keepDays: null, keepRuns: 20 });
    renderAt('/projects/1/retention', '/projects/:projectId/retention', <RetentionPage />, fetchImpl);
    // Asked first: declined, nothing is removed.
    const confirm = vi.spyOn(window, 'confirm').mockReturnValueOnce(false).mockReturnValueOnce(true);
    await user.click(await screen.findByRole('button', { name: 'Clean up now' }));
    expect(confirm).toHaveBeenCalledWith(
      expect.stringMatching(/^Remove now the runs this policy does not keep/),
    );
    expect(requests(fetchImpl, 'POST', '/api/projects/1/retention/run')).toHaveLength(0);
    await user.click(screen.getByRole('button', { name: 'Clean up now' }));
    expect(await screen.findByText('Removed 12 runs and 480,000 results.')).toBeTruthy();
    expect(requests(fetchImpl, 'POST', '/api/projects/1/retention/run')).toHaveLength(1);
  });

  it('shows a maintainer the policy and what it removes now, without a form', async () => {
    const fetchImpl = retentionApi('MAINTAINER', { keepDays: null, keepRuns: 20 });
    renderAt('/projects/1/retention', '/projects/:projectId/retention', <RetentionPage />, fetchImpl);
    expect(await screen.findByText('20 finished runs')).toBeTruthy();
    expect(screen.getByText('no limit by age')).toBeTruthy();
    expect(screen.getByText('Only the project’s owners change its retention.')).toBeTruthy();
    await waitFor(() =>
      expect(screen.getByRole('status').textContent).toBe('12 runs, 480,000 results would be removed'),
    );
    expect(screen.queryByRole('form')).toBeNull();
    expect(screen.queryByRole('button', { name: 'Save retention' })).toBeNull();
  });

  it('reads a bound as typed and words the preview', () => {
    expect(boundOf('')).toBeNull();
    expect(boundOf(' 1,000 ')).toBe(1000);
    expect(boundOf('100000')).toBe(100_000);
    expect(boundOf('100001')).toBeUndefined();
    expect(boundOf('0')).toBeUndefined();
    expect(boundOf('2.5')).toBeUndefined();
    expect(previewText({ runs: 0, results: 0 })).toBe('Nothing would be removed now.');
    expect(previewText({ runs: 12, results: 480_000 })).toBe('12 runs, 480,000 results would be removed');
  });
});

describe('Pinned runs', () => {
  beforeEach(() => {
    vi.stubGlobal(
      'WebSocket',
      class {
        static OPEN = 1;
        readyState = 0;
        send() {}
        close() {}
      },
    );
  });
  afterEach(() => vi.unstubAllGlobals());

  it('marks a pinned run in the runs list', () => {
    renderAt(
      '/projects/1',
      '/projects/:projectId',
      <RunsTable runs={[run(1, { pinned: true }), run(2)]} showStream={false} />,
      api({}),
    );
    expect(within(screen.getByTestId('run-1')).getByText('pinned')).toBeTruthy();
    expect(within(screen.getByTestId('run-2')).queryByText('pinned')).toBeNull();
  });

  const runPageApi = (role: ProjectRole, pinned: boolean) => {
    let current = run(5, { pinned });
    return api({
      '/api/runs/5': () => current,
      '/api/projects/1': () => ({ id: 1, key: 'SHOP', name: 'Shop', role, latestRun: null }),
      '/api/runs/5/results': () => pageOf([]),
      '/api/runs/5/suites': () => pageOf([]),
      '/api/runs/5/failure-groups': () => pageOf([]),
      'PUT /api/runs/5/pin': () => (current = { ...current, pinned: true }),
      'DELETE /api/runs/5/pin': () => {
        current = { ...current, pinned: false };
        return json(204);
      },
    });
  };

  it('pins and unpins a run from its page for a maintainer', async () => {
    const user = userEvent.setup();
    const fetchImpl = runPageApi('MAINTAINER', false);
    renderAt('/runs/5', '/runs/:runId', <RunPage />, fetchImpl);
    await user.click(await screen.findByRole('button', { name: 'Pin' }));
    const unpin = await screen.findByRole('button', { name: 'Unpin' });
    expect(unpin.getAttribute('aria-pressed')).toBe('true');
    expect(requests(fetchImpl, 'PUT', '/api/runs/5/pin')).toHaveLength(1);
    await user.click(unpin);
    expect(await screen.findByRole('button', { name: 'Pin' })).toBeTruthy();
    expect(requests(fetchImpl, 'DELETE', '/api/runs/5/pin')).toHaveLength(1);
  });

  it('shows a viewer that a run is pinned, without the button', async () => {
    renderAt('/runs/5', '/runs/:runId', <RunPage />, runPageApi('VIEWER', true));
    expect(await screen.findByText('pinned')).toBeTruthy();
    expect(screen.queryByRole('button', { name: /pin/i })).toBeNull();
  });
});
