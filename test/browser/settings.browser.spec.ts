import { type Page } from 'playwright-core';
import { type ApiCall, WebHarness, WIDTHS } from './harness.js';

/**
 * Issue #36 in Chromium against the built service: a project's settings page, a section a group, at 1280 and
 * 390 px, light and dark: the flaky tests policy changed and kept, its bounds said beside the field before anything
 * is sent, the other groups' values as they stand, and its loading and error states.
 */
describe('Project settings, in the browser', () => {
  const ui = new WebHarness();
  let api: ApiCall;
  let projectId: number;

  beforeAll(async () => {
    api = await ui.api();
    projectId = (await api('POST', '/api/projects', { key: 'SETS', name: 'Settings shop' }))!.id;
    // A stream or two to choose the default from.
    for (const name of ['nightly #1', 'smoke #1']) {
      const run = (await api('POST', `/api/projects/${projectId}/runs`, {
        name,
        attributes: { branch: 'main' },
      }))!;
      await api('POST', `/api/runs/${run.id}/results`, {
        results: [{ name: 'logs in', suite: 'Auth', status: 'PASSED' }],
      });
      await api('POST', `/api/runs/${run.id}/finish`, {});
    }
  }, 120_000);

  /** Screenshots of the page as it is, light, then dark. */
  async function lightAndDark(page: Page, name: string): Promise<void> {
    await ui.check(page, name);
    await page.emulateMedia({ colorScheme: 'dark' });
    await ui.shoot(page, `${name}-dark`);
    await page.emulateMedia({ colorScheme: 'light' });
  }

  it('changes the flaky tests policy and keeps it, says what is out of bounds, and shows every group', async () => {
    const page = await ui.adminPage();
    await page.goto(`${ui.base}/projects/${projectId}`);
    await page.getByRole('navigation', { name: 'Project' }).getByRole('link', { name: 'Settings' }).click();
    await page.getByRole('heading', { name: 'Settings of Settings shop' }).waitFor();
    const flaky = page.getByRole('form', { name: 'Flaky tests policy' });
    await flaky.getByLabel('Window (runs)').waitFor();
    expect(await flaky.getByLabel('Window (runs)').inputValue()).toBe('30');
    expect(await flaky.getByLabel('Flip rate threshold (%)').inputValue()).toBe('20');
    // Every group in a section of its own: the gate's and retention's editors (GateForm, RetentionEditor) in theirs.
    for (const name of [
      'Flaky tests',
      'Streams',
      'Quality gate',
      'Failure triage',
      'Retention',
      'Notifications',
    ]) {
      await page.getByRole('region', { name }).waitFor();
    }
    await page
      .getByRole('region', { name: 'Quality gate' })
      .getByRole('form', { name: 'Quality gate' })
      .waitFor();
    await page.getByRole('region', { name: 'Retention' }).getByLabel('Keep runs for (days)').waitFor();
    await lightAndDark(page, 'settings');

    // Out of bounds: said beside the field, nothing sent.
    await flaky.getByLabel('Minimum runs').fill('40');
    await flaky.getByRole('button', { name: 'Save the policy' }).click();
    await flaky.getByText('A whole number from 2 to 30 (the window).').waitFor();
    expect(await flaky.getByLabel('Minimum runs').getAttribute('aria-invalid')).toBe('true');
    expect((await api('GET', `/api/projects/${projectId}/settings`)) as object).toMatchObject({
      flaky: { minRuns: 5 },
    });
    await ui.shoot(page, 'settings-invalid');

    // A change that holds: saved, shown, and there after a reload.
    await flaky.getByLabel('Minimum runs').fill('6');
    await flaky.getByLabel('Window (runs)').fill('50');
    await flaky.getByLabel('Flip rate threshold (%)').fill('12.5');
    await flaky.getByLabel('Quarantine a test automatically when it becomes flaky').check();
    await flaky.getByLabel('Release after passing runs').fill('3');
    await flaky.getByRole('button', { name: 'Save the policy' }).click();
    await page.getByText('The flaky tests policy is saved.').waitFor();
    expect((await api('GET', `/api/projects/${projectId}/settings`)) as object).toMatchObject({
      flaky: { window: 50, minRuns: 6, flipRate: 0.125, autoQuarantine: true, releaseAfterPasses: 3 },
    });
    await page.reload();
    await flaky.getByLabel('Window (runs)').waitFor();
    expect(await flaky.getByLabel('Window (runs)').inputValue()).toBe('50');
    expect(await flaky.getByLabel('Flip rate threshold (%)').inputValue()).toBe('12.5');
    expect(await flaky.getByLabel('Quarantine a test automatically when it becomes flaky').isChecked()).toBe(
      true,
    );

    // The streams: the attributes as a list, a default chosen among the project's streams.
    const streams = page.getByRole('form', { name: 'Streams' });
    await streams.getByLabel('Default stream').locator('option', { hasText: 'smoke · main' }).waitFor({
      state: 'attached',
    });
    await streams.getByLabel('Attributes').fill('branch, env, region');
    await streams.getByLabel('Default stream').selectOption('smoke · main');
    await streams.getByRole('button', { name: 'Save the streams' }).click();
    await page.getByText('The streams are saved.').waitFor();
    expect((await api('GET', `/api/projects/${projectId}/settings`)) as object).toMatchObject({
      streams: { attributes: ['branch', 'env', 'region'], default: 'smoke · main' },
    });

    // On a phone: one column, nothing off the screen, the same form.
    await page.setViewportSize(WIDTHS.phone);
    await flaky.getByLabel('Window (runs)').fill('60');
    await flaky.getByRole('button', { name: 'Save the policy' }).click();
    await page.getByText('The flaky tests policy is saved.').waitFor();
    await page.setViewportSize(WIDTHS.desktop);
    await lightAndDark(page, 'settings-saved');
    await page.context().close();
  }, 180_000);

  it('shows its loading state, and why a project it cannot open has no settings', async () => {
    const page = await ui.adminPage();
    // The settings held back a moment (the real answer, later): the page says it is loading.
    let release: () => void = () => undefined;
    const held = new Promise<void>((done) => (release = done));
    await page.route('**/api/projects/*/settings', async (route) => {
      await held;
      await route.continue();
    });
    await page.goto(`${ui.base}/projects/${projectId}/settings`);
    await page.getByText('Loading the settings…').waitFor();
    await ui.shoot(page, 'settings-loading');
    release();
    await page.getByRole('form', { name: 'Flaky tests policy' }).waitFor();
    await page.unroute('**/api/projects/*/settings');

    await page.goto(`${ui.base}/projects/999999/settings`);
    await page.getByRole('alert').filter({ hasText: 'Project 999999 not found' }).waitFor();
    expect(await page.getByRole('form').count()).toBe(0);
    await ui.check(page, 'settings-error');
    await page.context().close();
  }, 120_000);
});
