import { cleanup, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import type { ProjectRole, ProjectSettings } from '../src/api/client';
import { fractionOf, percentOf } from '../src/pages/projects/settings/FlakySection';
import { SettingsPage } from '../src/pages/projects/settings/SettingsPage';
import { api, json, pageOf, renderAt, requests } from './support';

const SETTINGS: ProjectSettings = {
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
  retention: { keepDays: 90, keepRuns: null },
  streams: { attributes: ['branch', 'env'], default: null },
};

const PATH = '/api/projects/1/settings';

const routes = (role: ProjectRole, patch: (body: unknown) => unknown = () => SETTINGS) => ({
  '/api/projects/1': () => ({ id: 1, key: 'SHOP', name: 'Shop', role, latestRun: null }),
  [PATH]: () => SETTINGS,
  '/api/projects/1/streams': () => pageOf([]),
  [`PATCH ${PATH}`]: patch,
});

const bodies = (fetchImpl: ReturnType<typeof api>) =>
  requests(fetchImpl, 'PATCH', PATH).map(([, init]) => JSON.parse(String(init!.body)) as unknown);

const renderSettings = (fetchImpl: ReturnType<typeof api>) =>
  renderAt('/projects/1/settings', '/projects/:projectId/settings', <SettingsPage />, fetchImpl);

describe('The flip rate as a percentage', () => {
  it('shows a fraction as a percentage without binary noise, and keeps what is typed as a fraction', () => {
    expect(percentOf(0.2)).toBe('20');
    expect(percentOf(0.29)).toBe('29');
    expect(percentOf(0.125)).toBe('12.5');
    expect(fractionOf('12.5')).toBe(0.125);
    expect(fractionOf('29')).toBe(0.29);
    expect(fractionOf('0')).toBe(0);
    expect(fractionOf('-3')).toBeUndefined();
    expect(fractionOf('abc')).toBeUndefined();
  });
});

describe("A project's settings page", () => {
  it('lays the settings out a section a group, each with its current values', async () => {
    renderSettings(api(routes('OWNER')));
    const flaky = within(await screen.findByRole('region', { name: 'Flaky tests' }));
    expect((flaky.getByLabelText('Window (runs)') as HTMLInputElement).value).toBe('30');
    expect((flaky.getByLabelText('Minimum runs') as HTMLInputElement).value).toBe('5');
    expect((flaky.getByLabelText('Flip rate threshold (%)') as HTMLInputElement).value).toBe('20');
    expect(
      (flaky.getByLabelText('Quarantine a test automatically when it becomes flaky') as HTMLInputElement)
        .checked,
    ).toBe(false);
    expect((flaky.getByLabelText('Release after passing runs') as HTMLInputElement).value).toBe('10');
    const streams = within(screen.getByRole('region', { name: 'Streams' }));
    expect((streams.getByLabelText('Attributes') as HTMLInputElement).value).toBe('branch, env');
    // The gate (GateForm), triage and, for an owner, retention (RetentionEditor) are edited in their sections.
    expect(within(screen.getByRole('region', { name: 'Quality gate' })).getByRole('form')).toBeTruthy();
    const triage = within(screen.getByRole('region', { name: 'Failure triage' }));
    expect((triage.getByLabelText('Similarity (%)') as HTMLInputElement).value).toBe('80');
    expect(screen.getByRole('region', { name: 'Retention' }).querySelector('input')).toBeTruthy();
    expect(screen.getByRole('region', { name: 'Notifications' })).toBeTruthy();
    // An owner changes retention: no word about who may.
    expect(screen.queryByText('Only the project’s owners change its retention.')).toBeNull();
    expect(screen.queryByText(/you can read its settings/)).toBeNull();
    expect(document.title).toBe('Settings of Shop · Test Management');
  });

  it('sends only the policy fields changed, the flip rate as a fraction, and shows the saved values', async () => {
    const saved: ProjectSettings = {
      ...SETTINGS,
      flaky: { ...SETTINGS.flaky, window: 50, flipRate: 0.125, autoQuarantine: true },
    };
    const fetchImpl = api(routes('MAINTAINER', () => saved));
    renderSettings(fetchImpl);
    const flaky = within(await screen.findByRole('form', { name: 'Flaky tests policy' }));
    const save = flaky.getByRole('button', { name: 'Save the policy' });
    // Nothing changed: nothing to save.
    expect((save as HTMLButtonElement).disabled).toBe(true);
    const user = userEvent.setup();
    await user.clear(flaky.getByLabelText('Window (runs)'));
    await user.type(flaky.getByLabelText('Window (runs)'), '50');
    await user.clear(flaky.getByLabelText('Flip rate threshold (%)'));
    await user.type(flaky.getByLabelText('Flip rate threshold (%)'), '12.5');
    expect(flaky.getByText('0.125')).toBeTruthy();
    await user.click(flaky.getByLabelText('Quarantine a test automatically when it becomes flaky'));
    await user.click(save);
    expect(await screen.findByText('The flaky tests policy is saved.')).toBeTruthy();
    expect(bodies(fetchImpl)).toEqual([{ flaky: { window: 50, flipRate: 0.125, autoQuarantine: true } }]);
    const form = within(screen.getByRole('form', { name: 'Flaky tests policy' }));
    expect((form.getByLabelText('Window (runs)') as HTMLInputElement).value).toBe('50');
    expect((form.getByLabelText('Flip rate threshold (%)') as HTMLInputElement).value).toBe('12.5');
  });

  it('lets a MAINTAINER change the triage similarity, checked before it is sent; a VIEWER reads it', async () => {
    const saved = { ...SETTINGS, triage: { similarity: 0.65 } };
    const fetchImpl = api(routes('MAINTAINER', () => saved));
    renderSettings(fetchImpl);
    const triage = within(await screen.findByRole('form', { name: 'Failure triage' }));
    const save = triage.getByRole('button', { name: 'Save the similarity' });
    expect((save as HTMLButtonElement).disabled).toBe(true);
    const user = userEvent.setup();
    await user.clear(triage.getByLabelText('Similarity (%)'));
    await user.type(triage.getByLabelText('Similarity (%)'), '120');
    await user.click(save);
    expect(triage.getByText('A percentage from 0 to 100.')).toBeTruthy();
    expect(bodies(fetchImpl)).toEqual([]);
    await user.clear(triage.getByLabelText('Similarity (%)'));
    await user.type(triage.getByLabelText('Similarity (%)'), '65');
    await user.click(triage.getByRole('button', { name: 'Save the similarity' }));
    expect(await screen.findByText('The triage similarity is saved.')).toBeTruthy();
    expect(bodies(fetchImpl)).toEqual([{ triage: { similarity: 0.65 } }]);
    cleanup();

    renderSettings(api(routes('VIEWER')));
    const read = within(await screen.findByRole('region', { name: 'Failure triage' }));
    expect(read.getAllByRole('definition').map((d) => d.textContent)).toEqual(['80 % (0.8)']);
    expect(read.queryByRole('form')).toBeNull();
  });

  it('says what is out of bounds beside the field before sending anything', async () => {
    const fetchImpl = api(routes('MAINTAINER'));
    renderSettings(fetchImpl);
    const flaky = within(await screen.findByRole('form', { name: 'Flaky tests policy' }));
    const user = userEvent.setup();
    await user.clear(flaky.getByLabelText('Window (runs)'));
    await user.type(flaky.getByLabelText('Window (runs)'), '10');
    await user.clear(flaky.getByLabelText('Minimum runs'));
    await user.type(flaky.getByLabelText('Minimum runs'), '12');
    await user.clear(flaky.getByLabelText('Flip rate threshold (%)'));
    await user.type(flaky.getByLabelText('Flip rate threshold (%)'), '150');
    await user.clear(flaky.getByLabelText('Release after passing runs'));
    await user.type(flaky.getByLabelText('Release after passing runs'), '0');
    await user.click(flaky.getByRole('button', { name: 'Save the policy' }));
    const described = (label: string) => {
      const input = flaky.getByLabelText(label);
      expect([label, input.getAttribute('aria-invalid')]).toEqual([label, 'true']);
      return document.getElementById(input.getAttribute('aria-describedby')!)!.textContent;
    };
    expect(described('Minimum runs')).toBe('A whole number from 2 to 10 (the window).');
    expect(described('Flip rate threshold (%)')).toBe('A percentage from 0 to 100.');
    expect(described('Release after passing runs')).toBe('A whole number from 1 to 100.');
    expect(flaky.getByLabelText('Window (runs)').getAttribute('aria-invalid')).toBeNull();
    expect(bodies(fetchImpl)).toEqual([]);
    // A window out of range is its own problem: the minimum is not told "from 2 to 2" for it.
    await user.clear(flaky.getByLabelText('Window (runs)'));
    await user.type(flaky.getByLabelText('Window (runs)'), '1');
    await user.clear(flaky.getByLabelText('Minimum runs'));
    await user.type(flaky.getByLabelText('Minimum runs'), '3');
    expect(described('Window (runs)')).toBe('A whole number from 2 to 500.');
    expect(flaky.getByLabelText('Minimum runs').getAttribute('aria-invalid')).toBeNull();
    await user.clear(flaky.getByLabelText('Minimum runs'));
    await user.type(flaky.getByLabelText('Minimum runs'), '1');
    expect(described('Minimum runs')).toBe('A whole number from 2 to the window.');
  });

  it("shows the API's 400 beside the fields it names, and what names none under the form", async () => {
    const fetchImpl = api(
      routes('MAINTAINER', () =>
        json(400, {
          status: 400,
          error: 'Bad Request',
          message:
            'flaky.window must be a whole number from 2 to 500; flaky.minRuns must be at most flaky.window (40)',
        }),
      ),
    );
    renderSettings(fetchImpl);
    const flaky = within(await screen.findByRole('form', { name: 'Flaky tests policy' }));
    const user = userEvent.setup();
    await user.clear(flaky.getByLabelText('Minimum runs'));
    await user.type(flaky.getByLabelText('Minimum runs'), '20');
    await user.click(flaky.getByRole('button', { name: 'Save the policy' }));
    const hint = (label: string) =>
      document.getElementById(flaky.getByLabelText(label).getAttribute('aria-describedby')!)!.textContent;
    await waitFor(() => expect(hint('Window (runs)')).toBe('Must be a whole number from 2 to 500.'));
    expect(hint('Minimum runs')).toBe('Must be at most flaky.window (40).');
    expect(flaky.getByLabelText('Window (runs)').getAttribute('aria-invalid')).toBe('true');
    expect(bodies(fetchImpl)).toEqual([{ flaky: { minRuns: 20 } }]);
    // A change of the box puts its hint back: the refusal was of the values sent.
    await user.type(flaky.getByLabelText('Minimum runs'), '0');
    expect(hint('Window (runs)')).toMatch(/^2 to 500: /);
  });

  it("shows a refusal that names no field, and the API's other errors, under the form", async () => {
    const fetchImpl = api(
      routes('MAINTAINER', () =>
        json(403, { status: 403, error: 'Forbidden', message: 'You need the MAINTAINER role in project 1' }),
      ),
    );
    renderSettings(fetchImpl);
    const flaky = within(await screen.findByRole('form', { name: 'Flaky tests policy' }));
    const user = userEvent.setup();
    await user.click(flaky.getByLabelText('Quarantine a test automatically when it becomes flaky'));
    await user.click(flaky.getByRole('button', { name: 'Save the policy' }));
    expect((await flaky.findByRole('alert')).textContent).toBe('You need the MAINTAINER role in project 1');
  });

  it('sends the stream attributes as a list', async () => {
    const fetchImpl = api(
      routes('MAINTAINER', () => ({
        ...SETTINGS,
        streams: { attributes: ['env', 'region'], default: null },
      })),
    );
    renderSettings(fetchImpl);
    const streams = within(await screen.findByRole('form', { name: 'Streams' }));
    const user = userEvent.setup();
    await user.clear(streams.getByLabelText('Attributes'));
    await user.type(streams.getByLabelText('Attributes'), 'env, region, ');
    await user.click(streams.getByRole('button', { name: 'Save the streams' }));
    expect(await screen.findByText('The streams are saved.')).toBeTruthy();
    expect(bodies(fetchImpl)).toEqual([{ streams: { attributes: ['env', 'region'] } }]);
  });

  it.each(['VIEWER', 'REPORTER'] as const)(
    'shows a %s every value read-only, and says who changes them',
    async (role) => {
      renderSettings(api(routes(role)));
      expect(
        await screen.findByText(
          `You are a ${role.toLowerCase()} of this project: you can read its settings; maintainers and owners change them.`,
        ),
      ).toBeTruthy();
      // Of the settings, nothing to change (their own mail, in Notifications, is theirs to choose).
      for (const name of ['Flaky tests', 'Streams', 'Quality gate', 'Failure triage', 'Retention']) {
        const section = within(screen.getByRole('region', { name }));
        expect([name, section.queryAllByRole('form'), section.queryAllByRole('textbox')]).toEqual([
          name,
          [],
          [],
        ]);
      }
      expect(screen.queryAllByRole('button', { name: /^Save/ })).toEqual([]);
      const flaky = within(screen.getByRole('region', { name: 'Flaky tests' }));
      expect(flaky.getAllByRole('definition').map((d) => d.textContent)).toEqual([
        'the last 30 runs a test ran in',
        '5 runs before the flip rate counts',
        '20 % (0.2)',
        'off',
        '10 passing runs in a row',
      ]);
      expect(
        within(screen.getByRole('region', { name: 'Quality gate' }))
          .getAllByRole('definition')
          .map((d) => d.textContent),
      ).toEqual(['on', '0', 'none', 'none', 'no', 'not counted', 'not counted']);
      expect(screen.getByText('Only the project’s owners change its retention.')).toBeTruthy();
    },
  );

  it('tells a MAINTAINER that retention is for owners, and edits the rest', async () => {
    renderSettings(api(routes('MAINTAINER')));
    expect(await screen.findByRole('form', { name: 'Flaky tests policy' })).toBeTruthy();
    expect(screen.getByText('Only the project’s owners change its retention.')).toBeTruthy();
  });

  it('says why the settings cannot be shown', async () => {
    renderSettings(
      api({
        ...routes('OWNER'),
        [PATH]: () => json(404, { status: 404, error: 'Not Found', message: 'Project 1 not found' }),
      }),
    );
    expect((await screen.findByRole('alert')).textContent).toBe('Project 1 not found');
    expect(screen.queryAllByRole('region')).toEqual([]);
  });
});
