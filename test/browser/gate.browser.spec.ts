import { type ApiCall, WebHarness, WIDTHS } from './harness.js';

/**
 * Issue #38: the quality gate in the web app: a badge on the runs list, and on the run page the verdict with each
 * condition (what it needs, what the run had, what was not met), decided live as the run finishes.
 */
describe('The quality gate in Chromium, at 1280 and 390 px', () => {
  const ui = new WebHarness();
  let call: ApiCall;
  let projectId: number;
  let passed: number;
  let failed: number;

  /** A run of the nightly stream with these outcomes; finished unless told. */
  async function nightly(n: number, failing: string[], finish = true): Promise<number> {
    const run = (await call('POST', `/api/projects/${projectId}/runs`, {
      name: `nightly #${n}`,
      attributes: { branch: 'main' },
    }))!;
    const results = ['logs in', 'adds to cart', 'pays by card', 'ships', 'sends the receipt', 'refunds'].map(
      (name) => ({
        name,
        suite: 'Checkout',
        status: failing.includes(name) ? 'FAILED' : 'PASSED',
        message: failing.includes(name) ? `expected: <200> but was: <500> (${name})` : undefined,
      }),
    );
    await call('POST', `/api/runs/${run.id}/results`, { results });
    if (finish) {
      await call('POST', `/api/runs/${run.id}/finish`, {});
    }
    return run.id;
  }

  beforeAll(async () => {
    call = await ui.api();
    projectId = (await call('POST', '/api/projects', { key: 'GATEUI', name: 'Checkout gate' }))!.id;
    await call('PATCH', `/api/projects/${projectId}/settings`, {
      gate: { maxFailed: 1, minPassRate: 80, minTotal: 5, noNewFailures: true },
    });
    passed = await nightly(1, []);
    failed = await nightly(2, ['refunds', 'pays by card']);
  }, 60_000);

  it("marks each run's gate on the runs list", async () => {
    const page = await ui.adminPage();
    await page.goto(`${ui.base}/projects/${projectId}`);
    const first = page.getByTestId(`run-${passed}`).getByRole('link', { name: 'Gate passed: nightly #1' });
    const second = page.getByTestId(`run-${failed}`).getByRole('link', { name: 'Gate failed: nightly #2' });
    await first.waitFor();
    await second.waitFor();
    expect(await second.textContent()).toContain('gate failed');
    await ui.check(page, 'gate-runs');
    // On a phone the badge stays beside its run's name, whole.
    await page.setViewportSize(WIDTHS.phone);
    const badge = (await second.boundingBox())!;
    expect(badge.x + badge.width).toBeLessThanOrEqual(WIDTHS.phone.width);
    await second.click();
    await page.waitForURL(new RegExp(`/runs/${failed}#gate-title$`));
    await page.context().close();
  }, 60_000);

  it('shows on the run page which conditions failed, what they need and what the run had', async () => {
    const page = await ui.adminPage();
    await page.goto(`${ui.base}/runs/${failed}`);
    const gate = page.getByRole('region', { name: /Quality gate/ });
    await gate.getByRole('table').waitFor();
    expect(await gate.getByRole('heading', { level: 2 }).textContent()).toContain('Gate failed');
    expect(await gate.locator('.gate-verdict').textContent()).toContain(
      '3 conditions of 4 not met: failed tests, pass rate, new failures.',
    );
    // (The links' hidden words, the run's name, are read too.)
    const rows = await gate.getByRole('row').allInnerTexts();
    expect(rows.map((r) => r.replace(/\s+/g, ' ').trim())).toEqual([
      'Condition Needed This run Met',
      'Failed tests at most 1 2 · the failures of nightly #2 ✗ not met',
      'Pass rate at least 80 % 66.66 % · the failures of nightly #2 ✗ not met',
      'Tests run at least 5 6 ✓ met',
      'New failures none 2 · the new failures of nightly #2 ✗ not met',
    ]);
    await ui.check(page, 'gate-run-failed');
    // The way to the new failure: compare, on what changed.
    await gate.getByRole('link', { name: 'the new failures of nightly #2' }).click();
    await page.waitForURL(new RegExp(`/runs/${failed}/compare\\?change=NEW_FAILURE$`));
    await page.context().close();
  }, 60_000);

  it('decides the gate live on the page of a run in progress as it finishes', async () => {
    const page = await ui.adminPage();
    const running = await nightly(3, [], false);
    await page.goto(`${ui.base}/runs/${running}`);
    const gate = page.getByRole('region', { name: /Quality gate/ });
    await gate.getByText('Decided when the run finishes.').waitFor();
    await ui.check(page, 'gate-run-pending');
    await call('POST', `/api/runs/${running}/finish`, {});
    await gate.getByText('All 4 conditions met.').waitFor();
    expect(await gate.getByRole('heading', { level: 2 }).textContent()).toContain('Gate passed');
    await ui.check(page, 'gate-run-passed');
    await page.context().close();
  }, 60_000);
});
