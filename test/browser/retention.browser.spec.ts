import { type ApiCall, WebHarness } from './harness.js';

/**
 * Issue #40 in Chromium against the built service: the retention section says what a policy would remove before it is
 * saved, an owner saves it and cleans up at once, and a run is pinned from its page and marked in the runs list; at
 * 1280 and 390 px.
 */
describe('Retention, in the browser', () => {
  const ui = new WebHarness();
  let api: ApiCall;
  let projectId: number;
  const runs: number[] = [];
  const DAY = 86_400_000;

  beforeAll(async () => {
    api = await ui.api();
    projectId = (await api('POST', '/api/projects', { key: 'KEEP', name: 'Keep' }))!.id;
    // Ten finished nightly runs, one a day, the oldest first; 40 results each.
    for (let i = 0; i < 10; i++) {
      const startedAt = new Date(Date.now() - (10 - i) * DAY).toISOString();
      const run = (await api('POST', `/api/projects/${projectId}/runs`, {
        name: `nightly #${i + 1}`,
        startedAt,
      }))!;
      const results = Array.from({ length: 40 }, (_, t) => ({
        name: `test ${t + 1}`,
        suite: 'Checkout',
        status: t < i % 3 ? 'FAILED' : 'PASSED',
      }));
      await api('POST', `/api/runs/${run.id}/results`, { results });
      await api('POST', `/api/runs/${run.id}/finish`, {
        finishedAt: new Date(Date.parse(startedAt) + 60_000).toISOString(),
      });
      runs.push(run.id);
    }
  }, 120_000);

  it('pins a run from its page and marks it in the runs list', async () => {
    const page = await ui.adminPage();
    await page.goto(`${ui.base}/runs/${runs[1]}`);
    await page.getByRole('button', { name: 'Pin' }).click();
    await page.getByRole('button', { name: 'Unpin' }).waitFor();
    await ui.check(page, 'retention-run-pinned');
    await page.goto(`${ui.base}/projects/${projectId}`);
    const pinnedRow = page.getByTestId(`run-${runs[1]}`);
    await pinnedRow.getByText('pinned').waitFor({ state: 'attached' });
    expect(await page.getByTestId(`run-${runs[2]}`).getByText('pinned').count()).toBe(0);
    await ui.check(page, 'retention-runs-list');
  }, 120_000);

  it('says what a policy would remove before it is saved, saves it, and cleans up at once', async () => {
    const page = await ui.adminPage();
    await page.goto(`${ui.base}/projects/${projectId}`);
    // The policy is a section of the project's settings.
    await page.getByRole('navigation', { name: 'Project' }).getByRole('link', { name: 'Settings' }).click();
    const form = page.getByRole('form', { name: 'Retention policy' });
    await form.getByText('No limit: every run is kept.').waitFor();
    // Keep the newest 3: of the ten, #1 and #3 to #7 go (#2 is pinned), 6 runs of 40 results.
    await form.getByLabel('Keep at most (finished runs)').fill('3');
    await form.getByText('6 runs, 240 results would be removed').waitFor();
    await ui.check(page, 'retention-preview');
    // Out of range: said beside the field, nothing asked of the API.
    await form.getByLabel('Keep runs for (days)').fill('0');
    await form.getByText('A whole number of days from 1 to 100,000, or empty.').waitFor();
    await ui.check(page, 'retention-invalid');
    await form.getByLabel('Keep runs for (days)').fill('');

    await form.getByRole('button', { name: 'Save retention' }).click();
    await page.getByText('Retention saved.').waitFor();
    // Asked first (it cannot be undone): accepted.
    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: 'Clean up now' }).click();
    await page.getByText('Removed 6 runs and 240 results.').waitFor();
    await page.getByText('Nothing would be removed now.').waitFor();
    await ui.check(page, 'retention-cleaned');

    await page.goto(`${ui.base}/projects/${projectId}`);
    await page.getByTestId(`run-${runs[9]}`).waitFor();
    expect(await page.locator('table.runs tbody tr').count()).toBe(4);
  }, 180_000);
});
