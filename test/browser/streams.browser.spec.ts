import { type Page } from 'playwright-core';
import { eventually } from '../support/http.js';
import { type ApiCall, WebHarness, WIDTHS } from './harness.js';

/**
 * Issue #35 in Chromium against the built service: a test retried within a run is one row with its attempts inside
 * (a pass on retry marked and listed apart from the failures), and a project's runs are picked by stream, held in
 * the URL, at 1280 and 390 px, light and dark.
 */
describe('Runs by outcome and by stream, in the browser', () => {
  const ui = new WebHarness();
  let api: ApiCall;
  let projectId: number;
  let latest: number;
  let other: number;
  /** nightly #1201 to #1207. */
  const builds: number[] = [];
  const NIGHTLY = 'nightly · main · staging';
  const RELEASE = 'nightly · release · staging';

  /** A finished run of `tests` tests, `failing` of them failing, with the retried tests of `extra`. */
  async function runOf(
    name: string,
    attributes: Record<string, string>,
    tests: number,
    failing: number,
    extra: object[] = [],
  ): Promise<number> {
    const run = (await api('POST', `/api/projects/${projectId}/runs`, { name, attributes }))!;
    const results = Array.from({ length: tests }, (_, i) => ({
      name: `test ${String(i + 1).padStart(2, '0')}`,
      suite: i % 2 ? 'Cart' : 'Search',
      status: i < failing ? 'FAILED' : 'PASSED',
      durationMs: 100 + i,
      ...(i < failing ? { message: `expected ${i} but was ${i + 1}` } : {}),
    }));
    await api('POST', `/api/runs/${run.id}/results`, { results: [...results, ...extra] });
    await api('POST', `/api/runs/${run.id}/finish`, {});
    return run.id;
  }

  const payByCard = [
    {
      name: 'pays by card',
      suite: 'Checkout',
      status: 'FAILED',
      durationMs: 5000,
      retry: 0,
      message: 'Timed out after 5000 ms waiting for the payment frame',
      trace:
        'org.openqa.selenium.TimeoutException: payment frame\n\tat Checkout.paysByCard(Checkout.java:42)',
    },
    { name: 'pays by card', suite: 'Checkout', status: 'PASSED', durationMs: 1200, retry: 1 },
    {
      name: 'applies a voucher',
      suite: 'Checkout',
      status: 'BROKEN',
      durationMs: 10,
      retry: 0,
      message: 'db down',
    },
    {
      name: 'applies a voucher',
      suite: 'Checkout',
      status: 'FAILED',
      durationMs: 12,
      retry: 1,
      message: 'db down again',
    },
  ];

  beforeAll(async () => {
    api = await ui.api();
    projectId = (await api('POST', '/api/projects', { key: 'SHOP', name: 'Shop' }))!.id;
    for (let build = 1; build <= 7; build++) {
      builds.push(
        await runOf(
          `nightly #${1200 + build}`,
          {
            branch: 'main',
            env: 'staging',
            ci: `https://ci.example.com/job/nightly/${1200 + build}`,
            commit: `c0ffee${build}`,
          },
          60,
          build % 3,
        ),
      );
    }
    other = await runOf('nightly #88', { branch: 'release', env: 'staging' }, 20, 4);
    latest = await runOf(
      'nightly #1208',
      { branch: 'main', env: 'staging', ci: 'https://ci.example.com/job/nightly/1208' },
      60,
      1,
      payByCard,
    );
    // A project of one stream, and one of none.
    const single = (await api('POST', '/api/projects', { key: 'ONE', name: 'One stream' }))!.id;
    await api('POST', `/api/projects/${single}/runs`, { name: 'smoke #1', attributes: { branch: 'main' } });
    await api('POST', '/api/projects', { key: 'NONE', name: 'No runs yet' });
  }, 120_000);

  /** Screenshots of the page as it is, light, then dark. */
  async function lightAndDark(page: Page, name: string): Promise<void> {
    await ui.check(page, name);
    await page.emulateMedia({ colorScheme: 'dark' });
    await ui.shoot(page, `${name}-dark`);
    await page.emulateMedia({ colorScheme: 'light' });
  }

  it('shows a retried test as one row with its attempts inside, and a pass on retry apart from the failures', async () => {
    const page = await ui.adminPage();
    await page.goto(`${ui.base}/runs/${latest}`);
    // 60 tests and the 2 retried: 62 tests, 64 attempts; one passed on retry.
    await page
      .getByText(/62 tests: 60 passed \(1 passed on retry\), 2 failed, 0 broken, 0 skipped · 64 attempts/)
      .waitFor();
    const retried = page.getByTestId('passed-on-retry');
    await retried.getByText('pays by card').waitFor();
    expect(await retried.getByRole('listitem').count()).toBe(1);
    expect(await retried.textContent()).toContain('Timed out after 5000 ms');
    // Never among the failures: not in the failures' filter, not in their groups.
    expect(await page.locator('#groups-title + *').first().textContent()).not.toContain('payment frame');
    await page.getByPlaceholder('Search by name').fill('pays by card');
    const row = page.getByRole('row').filter({ hasText: 'pays by card' });
    await row.getByText('passed on retry').waitFor();
    expect(await page.getByRole('row').filter({ hasText: 'pays by card' }).count()).toBe(1);
    await row.getByRole('button', { name: 'Show the 2 attempts of pays by card' }).click();
    const attempts = row.getByRole('list', { name: 'Attempts of pays by card' });
    await attempts.getByText('Timed out after 5000 ms waiting for the payment frame').waitFor();
    expect(await attempts.getByRole('listitem').count()).toBe(2);
    expect(await attempts.getByRole('listitem').nth(0).textContent()).toMatch(/Attempt 1failed5\.00 s/);
    expect(await attempts.getByRole('listitem').nth(1).textContent()).toMatch(
      /Attempt 2 \(retry 1\)passed1\.20 s/,
    );
    await attempts.getByText('Stack trace').click();
    await attempts.getByText(/Checkout\.java:42/).waitFor();
    await lightAndDark(page, 'streams-retried-row');
    // A retried failure is one row too, among the failures, its attempts counted.
    await page.getByPlaceholder('Search by name').fill('voucher');
    const failing = page.getByRole('row').filter({ hasText: 'applies a voucher' });
    await failing.getByText('2 attempts', { exact: true }).waitFor();
    await page.goto(`${ui.base}/runs/${latest}?status=FAILED%2CBROKEN`);
    await page.getByRole('row').filter({ hasText: 'applies a voucher' }).waitFor();
    expect(await page.getByRole('row').filter({ hasText: 'pays by card' }).count()).toBe(0);
    await page.context().close();
  }, 120_000);

  it('picks the runs of one stream, held in the URL, at both widths; the trend is of the stream and opens a run', async () => {
    const page = await ui.adminPage();
    // The projects list: the latest run of the default stream, its stream named.
    const shop = page.getByTestId(`project-${projectId}`);
    await shop.getByRole('link', { name: 'nightly #1208' }).waitFor();
    expect(await shop.getByRole('link', { name: `stream ${NIGHTLY}` }).count()).toBe(1);
    await lightAndDark(page, 'streams-projects');

    await page.goto(`${ui.base}/projects/${projectId}`);
    const select = page.getByLabel('Stream', { exact: true });
    await select.locator('option', { hasText: RELEASE }).waitFor({ state: 'attached' });
    await page.getByRole('heading', { name: `Pass rate of ${NIGHTLY} (the default stream)` }).waitFor();
    // Dense: at 1280x800 several runs in view above the fold, each with its failures, time and CI link.
    await page.getByTestId(`run-${latest}`).waitFor();
    await page.locator('.chart .u-over').waitFor();
    const tops = await page
      .locator('table.runs tbody tr')
      .evaluateAll((rows) => rows.map((r) => r.getBoundingClientRect().bottom));
    expect(tops.filter((bottom) => bottom <= WIDTHS.desktop.height).length).toBeGreaterThanOrEqual(4);
    const row = page.getByTestId(`run-${latest}`);
    const ci = row.getByRole('link', { name: /CI build/ });
    expect(await ci.getAttribute('href')).toBe('https://ci.example.com/job/nightly/1208');
    expect(await ci.getAttribute('rel')).toBe('noopener noreferrer');
    expect(await ci.getAttribute('target')).toBe('_blank');
    expect(await row.locator('time').getAttribute('title')).toBeTruthy();
    expect(await row.locator('time').textContent()).toMatch(/just now|min ago/);
    // New failures against the run before in the stream: #1207 fails test 01, which #1206 passed; #1208 fails
    // it again (still failing, none new).
    const fresh = page
      .getByTestId(`run-${builds[6]}`)
      .getByRole('link', { name: '1 new failure in nightly #1207' });
    expect(await fresh.textContent()).toBe('1 new');
    expect(await row.getByText(/ new$/).count()).toBe(0);
    await lightAndDark(page, 'streams-project-all');

    await select.selectOption(RELEASE);
    await page.waitForURL(/stream=nightly/);
    expect(new URL(page.url()).searchParams.get('stream')).toBe(RELEASE);
    await page.getByText('1 run in nightly · release · staging').waitFor();
    expect(await page.getByTestId(`run-${latest}`).count()).toBe(0);
    await page.getByRole('heading', { name: `Pass rate of ${RELEASE}` }).waitFor();
    await page.getByText('The trend shows once the stream has two finished runs.').waitFor();
    await page.reload();
    expect(await page.getByLabel('Stream', { exact: true }).inputValue()).toBe(RELEASE);
    await page.getByTestId(`run-${other}`).waitFor();

    // On a phone: the same choice, the same URL.
    await page.setViewportSize(WIDTHS.phone);
    await page.getByLabel('Stream', { exact: true }).selectOption(NIGHTLY);
    await page.waitForURL((url) => url.searchParams.get('stream') === NIGHTLY);
    await page.getByTestId(`run-${latest}`).waitFor();
    expect(await page.getByTestId(`run-${other}`).count()).toBe(0);
    await page.setViewportSize(WIDTHS.desktop);
    await lightAndDark(page, 'streams-project-nightly');

    // The trend of the stream: its y axis fits, a hover tells the run, a click opens it.
    const chart = page.locator('.chart .u-over');
    await chart.waitFor();
    // The chart is drawn again when the theme or the width changes: measure it once it is there,
    // and point through the locator, which finds the chart drawn last.
    const box = await eventually(async () => (await chart.boundingBox()) ?? undefined);
    const edge = { x: box.width - 3, y: box.height / 2 };
    await chart.hover({ position: edge });
    const tip = page.locator('.chart-tip');
    await tip.waitFor();
    expect(await tip.textContent()).toContain('nightly #1208');
    await chart.click({ position: edge });
    await page.waitForURL(new RegExp(`/runs/${latest}$`));

    // A stream with no runs, and a project of one stream.
    await page.goto(`${ui.base}/projects/${projectId}?stream=nothing%20here`);
    await page.getByText(/No runs in the stream/).waitFor();
    await lightAndDark(page, 'streams-project-empty-stream');
    await page.goto(`${ui.base}/projects`);
    await page.getByRole('link', { name: 'One stream' }).click();
    await page.getByText('One stream:').waitFor();
    expect(await page.getByLabel('Stream', { exact: true }).count()).toBe(0);
    await lightAndDark(page, 'streams-project-one-stream');

    // Compare: against the run before in its stream, another run of the stream to choose.
    await page.goto(`${ui.base}/runs/${latest}/compare`);
    await page.getByText(`Against the run before in ${NIGHTLY}`).waitFor();
    const base = page.getByLabel('Compared with');
    await base.locator('option', { hasText: 'nightly #1201' }).waitFor({ state: 'attached' });
    expect(await base.locator('option').allTextContents()).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^nightly #1207/),
        expect.stringMatching(/^nightly #1201/),
      ]),
    );
    expect((await base.locator('option').allTextContents()).some((o) => o.startsWith('nightly #88'))).toBe(
      false,
    );
    await lightAndDark(page, 'streams-compare');

    // A run's new failures on the runs list open compare on them.
    await page.goto(`${ui.base}/projects/${projectId}`);
    await page
      .getByTestId(`run-${builds[6]}`)
      .getByRole('link', { name: '1 new failure in nightly #1207' })
      .click();
    await page.waitForURL(new RegExp(`/runs/${builds[6]}/compare\\?change=NEW_FAILURE$`));
    await page.getByRole('heading', { name: 'New failures' }).waitFor();
    await page.getByText('test 01').first().waitFor();
    await page.context().close();
  }, 180_000);
});
