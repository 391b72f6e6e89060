import { join } from 'node:path';
import { type Locator, type Page } from 'playwright-core';
import { eventually } from '../support/http.js';
import { type ApiCall, SHOTS, WebHarness, WIDTHS } from './harness.js';

/**
 * Issue #34, items 10-13: a result on a page of its own (wrapped, copyable trace; attributes; attempts) usable on a
 * phone; the runs list on a phone; the charts in dark mode and on whole runs; failure groups labelled by a message.
 */
describe('A run and its results in Chromium, at 1280 and 390 px', () => {
  const ui = new WebHarness();
  let call: ApiCall;
  let projectId: number;
  let latest: number;
  const ids: Record<string, number> = {};

  // One unbroken token of 300 characters: a trace line no space lets wrap.
  const LONG_TOKEN = `com.example.${'checkout.payments.'.repeat(16)}CardPaymentServiceIntegrationTest`;
  const TRACE = [
    'org.opentest4j.AssertionFailedError: expected: <200> but was: <500>',
    `\tat ${LONG_TOKEN}.paysByCard(CardPaymentServiceIntegrationTest.java:42)`,
    ...Array.from(
      { length: 30 },
      (_, i) => `\tat org.junit.platform.engine.support.Frame${i}.run(Frame.java:${i + 1})`,
    ),
  ].join('\n');
  // Names and attribute values as CI tools write them: no space to wrap at (a full commit hash, a build URL).
  const RUN_NAME = 'nightly_regression_checkout_service_main_20261125T0200';

  beforeAll(async () => {
    call = await ui.api();
    projectId = (await call('POST', '/api/projects', { key: 'RUNPAGE', name: 'Checkout service' }))!.id;
    // Twelve runs for the trend, the last with failures of each kind.
    for (let i = 1; i <= 12; i++) {
      const run = (await call('POST', `/api/projects/${projectId}/runs`, {
        name: i === 12 ? RUN_NAME : `nightly #${i}`,
        attributes: {
          branch: 'main',
          commit: `${i}`.padStart(2, '0') + '4f2a9c1e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a',
          build: `https://ci.example.com/job/checkout-nightly/${1200 + i}/`,
        },
      }))!;
      const results: object[] = Array.from({ length: 8 }, (_, t) => ({
        name: `test ${t}`,
        suite: 'Smoke',
        status: t < i % 5 ? 'FAILED' : 'PASSED',
        message: t < i % 5 ? `expected ${t} but was ${t + 1}` : undefined,
        durationMs: 100 + t * i,
      }));
      if (i === 12) {
        results.push(
          // Passed on retry: the runs list says so beside the failures.
          {
            name: 'retries the refund',
            suite: 'Refunds',
            status: 'FAILED',
            message: 'timed out',
            durationMs: 50,
          },
          { name: 'retries the refund', suite: 'Refunds', status: 'PASSED', retry: 1, durationMs: 40 },
          {
            name: 'pays by card with 3-D Secure',
            suite: 'Checkout',
            status: 'FAILED',
            message: 'expected: <200> but was: <500>',
            trace: TRACE,
            durationMs: 900,
            attributes: { browser: 'firefox', 'build-url': `https://ci.example.com/${'job/'.repeat(20)}123` },
          },
          {
            name: 'pays by card with 3-D Secure',
            suite: 'Checkout',
            status: 'FAILED',
            retry: 1,
            message: 'expected: <200> but was: <502>',
            trace: TRACE,
            durationMs: 1200,
          },
          {
            name: 'reads a line',
            suite: 'Parser',
            status: 'BROKEN',
            message: 'org.opentest4j.AssertionFailedError: expected: <1> but was: <2> at Parser.getLine2()',
          },
          { name: 'ships', suite: 'Shipping', status: 'PASSED', durationMs: 30 },
        );
      }
      const { ids: stored } = (await call('POST', `/api/runs/${run.id}/results`, { results })) as unknown as {
        ids: number[];
      };
      await call('POST', `/api/runs/${run.id}/finish`, {});
      if (i === 12) {
        latest = run.id;
        [ids.first, ids.retry, ids.parser, ids.ships] = stored.slice(-4);
      }
    }
  }, 60_000);

  /** Whether a box scrolls sideways: its content wider than itself. */
  const scrollsSideways = (box: Locator) =>
    box.evaluate((el: { scrollWidth: number; clientWidth: number }) => el.scrollWidth > el.clientWidth + 1);

  it('opens a result on its own page: the trace wraps and copies, attributes and attempts, usable on a phone', async () => {
    const page = await ui.adminPage();
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: ui.base });
    await page.goto(`${ui.base}/runs/${latest}?status=FAILED`);
    // The run lists a test once, by its outcome (its last attempt, the retry): API.md, "Attempts".
    const link = page.getByRole('link', { name: 'pays by card with 3-D Secure' }).first();
    await link.click();
    await page.waitForURL(new RegExp(`/runs/${latest}/results/${ids.retry}$`));
    await page.getByRole('heading', { level: 1, name: 'pays by card with 3-D Secure' }).waitFor();
    const trace = page.getByTestId('trace');
    expect(await trace.textContent()).toBe(TRACE);
    await ui.check(page, 'result');
    // Wrapped at both widths, even the 300-character token: no box scrolls sideways, none is cut off.
    for (const viewport of Object.values(WIDTHS)) {
      await page.setViewportSize(viewport);
      expect([viewport.width, await scrollsSideways(trace)]).toEqual([viewport.width, false]);
      const box = (await trace.boundingBox())!;
      expect(box.x + box.width).toBeLessThanOrEqual(viewport.width);
    }
    await page.setViewportSize(WIDTHS.desktop);
    // The attempts of its test in the run.
    const attempts = page.getByRole('region', { name: 'Attempts in this run' }).getByRole('listitem');
    expect(await attempts.allTextContents()).toEqual([
      'Attempt 1: failed · 900 ms',
      'Attempt 2 (retry 1): failed · 1.20 s (this one)',
    ]);

    // Copied whole, as sent.
    await page.getByRole('button', { name: 'Copy the stack trace' }).click();
    await page.getByText('Copied the stack trace.').waitFor();
    type Browser = { navigator: { clipboard: { readText(): Promise<string> } } };
    expect(await page.evaluate(() => (globalThis as unknown as Browser).navigator.clipboard.readText())).toBe(
      TRACE,
    );

    // The other attempt with its attributes, then the outcome again, and back to the results as they were
    // filtered, the result marked.
    await page.getByRole('link', { name: /^Attempt 1/ }).click();
    await page.waitForURL(new RegExp(`/results/${ids.first}$`));
    await page.getByTestId('message').getByText('expected: <200> but was: <500>').waitFor();
    await page.getByRole('region', { name: 'Attributes' }).getByText('firefox').waitFor();
    await page.getByRole('link', { name: /^Attempt 2/ }).click();
    await page.waitForURL(new RegExp(`/results/${ids.retry}$`));
    await page.getByText('expected: <200> but was: <502>').waitFor();
    await page.getByRole('link', { name: `← Results of ${RUN_NAME}` }).click();
    await page.waitForURL(new RegExp(`/runs/${latest}\\?status=FAILED$`));
    await page.getByTestId(`result-${ids.retry}`).and(page.locator('.selected')).waitFor();
    await page.context().close();
  }, 90_000);

  it("shows a result's page while it loads, when it reported nothing, and when it is not found", async () => {
    const page = await ui.adminPage();
    // Loading: the result's read held.
    const ONE_RESULT = /\/api\/runs\/\d+\/results\/\d+$/;
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    await page.route(ONE_RESULT, async (route) => {
      await held;
      await route.continue();
    });
    await page.goto(`${ui.base}/runs/${latest}/results/${ids.ships}`);
    await page.getByText('Loading the result').waitFor();
    await ui.shoot(page, 'result-loading');
    release();
    // Empty: a passed result with no message, trace, attributes or retries.
    await page.getByText('No message or stack trace was reported for this result.').waitFor();
    expect(await page.getByRole('button', { name: /^Copy/ }).count()).toBe(0);
    await ui.check(page, 'result-empty');
    await page.unroute(ONE_RESULT);
    // Not found: the API's message, and the way back to the run.
    await page.goto(`${ui.base}/runs/${latest}/results/999999999`);
    await page
      .getByRole('alert')
      .filter({ hasText: `Result 999999999 not found in run ${latest}` })
      .waitFor();
    await page.getByRole('link', { name: `← Results of ${RUN_NAME}` }).waitFor();
    await ui.check(page, 'result-not-found');
    await page.context().close();
  }, 60_000);

  it('labels a failure group with one of its messages, digits of identifiers kept, the key as its tooltip', async () => {
    const page = await ui.adminPage();
    await page.goto(`${ui.base}/runs/${latest}`);
    const groups = page.getByRole('region', { name: 'Failures by cause' });
    const example = groups.getByText(
      'org.opentest4j.AssertionFailedError: expected: <1> but was: <2> at Parser.getLine2()',
    );
    await example.waitFor();
    expect(await example.getAttribute('title')).toBe(
      'org.opentest4j.AssertionFailedError: expected: <<n>> but was: <<n>> at Parser.getLine2()',
    );
    expect(await groups.getByText(/opentest<n>j|getLine<n>/).count()).toBe(0);
    await ui.check(page, 'run-groups');
    await page.context().close();
  }, 60_000);

  it("lists runs on a phone with each run's pass rate in view, nothing scrolling sideways", async () => {
    const page = await ui.adminPage();
    await page.goto(`${ui.base}/projects/${projectId}`);
    const row = page.getByTestId(`run-${latest}`);
    await row.getByRole('link', { name: RUN_NAME, exact: true }).waitFor();
    await ui.check(page, 'runs');
    await page.setViewportSize(WIDTHS.phone);
    expect(await scrollsSideways(page.locator('.table-wrap'))).toBe(false);
    // The failed count, the new failures and the passed on retry in their cell, wrapped (not under the count bar),
    // on a narrow phone too.
    await page.setViewportSize({ width: 320, height: 700 });
    const failed = row.locator('td.c-failed');
    await failed.getByText('+1 on retry').waitFor();
    expect(await scrollsSideways(failed)).toBe(false);
    const [failedBox, barBox] = [
      (await failed.boundingBox())!,
      (await row.locator('.countbar').boundingBox())!,
    ];
    expect(failedBox.x + failedBox.width).toBeLessThanOrEqual(barBox.x);
    await page.setViewportSize(WIDTHS.phone);
    const rate = row.locator('.rate');
    expect(await rate.textContent()).toMatch(/%$/);
    const box = (await rate.boundingBox())!;
    expect(box.x + box.width).toBeLessThanOrEqual(WIDTHS.phone.width);
    await page.context().close();
  }, 60_000);

  it("gives a result's name the row's width on a phone: the name above its status and duration, the row grown to both", async () => {
    const page = await ui.adminPage();
    await page.setViewportSize(WIDTHS.phone);
    await page.goto(`${ui.base}/runs/${latest}`);
    const row = page.getByTestId(`result-${ids.retry}`);
    const name = row.getByRole('link', { name: 'pays by card with 3-D Secure' });
    await name.waitFor();
    const [rowBox, nameBox, statusBox, durationBox] = await Promise.all(
      [row, name, row.locator('.c-status'), row.locator('.c-duration')].map(
        async (l) => (await l.boundingBox())!,
      ),
    );
    // The whole name in view, on its own line (it was cut to "pays by c…" beside the status), the retried test's
    // expander beside it inside the row.
    expect(
      await name.evaluate(
        (el: { scrollWidth: number; clientWidth: number }) => el.scrollWidth <= el.clientWidth,
      ),
    ).toBe(true);
    expect(statusBox.y).toBeGreaterThanOrEqual(nameBox.y + nameBox.height - 1);
    expect(durationBox.y).toBeGreaterThanOrEqual(nameBox.y + nameBox.height - 1);
    const expander = (await row.locator('button.expander').boundingBox())!;
    expect(expander.y).toBeGreaterThanOrEqual(rowBox.y);
    expect(statusBox.y + statusBox.height).toBeLessThanOrEqual(rowBox.y + rowBox.height);
    await page.screenshot({ path: join(SHOTS, 'results-phone.png') });
    await page.context().close();
  }, 60_000);

  it('keeps names without a space to break at inside the page: the projects list, the runs list, the trend title', async () => {
    // 200 characters of one word: a project, a run and its stream (branch) named so.
    const word = (c: string) => c.repeat(200);
    const long = (await call('POST', '/api/projects', { key: 'LONGWORD', name: word('x') }))!.id;
    const run = (await call('POST', `/api/projects/${long}/runs`, {
      name: word('R'),
      attributes: { branch: word('b') },
    }))!;
    await call('POST', `/api/runs/${run.id}/results`, {
      results: [{ name: word('t'), status: 'FAILED', message: word('z').repeat(5) }],
    });
    await call('POST', `/api/runs/${run.id}/finish`, {});
    const page = await ui.adminPage();
    await page.goto(`${ui.base}/`);
    await page.getByRole('link', { name: word('x') }).waitFor();
    // The short values beside them keep their words: the role is not broken into "owne / r".
    const role = page.getByRole('row', { name: new RegExp(word('x')) }).getByRole('cell', { name: 'owner' });
    const lines = await role.evaluate((cell) => {
      const range = cell.ownerDocument.createRange();
      range.selectNodeContents(cell);
      return new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size;
    });
    expect(lines).toBe(1);
    await ui.shoot(page, 'projects-long-names');
    await page.goto(`${ui.base}/projects/${long}`);
    await page.getByRole('link', { name: word('R'), exact: true }).waitFor();
    await ui.shoot(page, 'runs-long-names');
    // The comparison's changes: the name and the message wrap in their columns, the table as wide as its box.
    await page.goto(`${ui.base}/runs/${run.id}/compare`);
    await page.getByRole('link', { name: word('t') }).waitFor();
    for (const viewport of Object.values(WIDTHS)) {
      await page.setViewportSize(viewport);
      expect([viewport.width, await scrollsSideways(page.locator('.table-wrap').last())]).toEqual([
        viewport.width,
        false,
      ]);
    }
    await ui.shoot(page, 'compare-long-names');
    await page.context().close();
  }, 60_000);

  /**
   * How light the trend chart's y-axis labels are, 0 (black) to 1 (white): the mean luminance of the opaque pixels
   * in the canvas left of the plot, where uPlot writes them.
   */
  const axisLightness = (page: Page) =>
    page
      .locator('.chart canvas')
      .first()
      .evaluate(
        (canvas: {
          width: number;
          height: number;
          getContext(kind: '2d'): {
            getImageData(x: number, y: number, w: number, h: number): { data: ArrayLike<number> };
          };
        }) => {
          // (-1 while the chart is being drawn again: a new canvas not yet laid out.)
          const cssWidth = (canvas as unknown as { clientWidth: number }).clientWidth;
          if (!cssWidth || !canvas.width) {
            return -1;
          }
          const scale = canvas.width / cssWidth;
          const { data } = canvas
            .getContext('2d')
            .getImageData(0, 0, Math.round(45 * scale), canvas.height - Math.round(60 * scale));
          let sum = 0;
          let n = 0;
          for (let i = 0; i < data.length; i += 4) {
            if (data[i + 3] > 200) {
              sum += (0.2126 * data[i] + 0.7152 * data[i + 1] + 0.0722 * data[i + 2]) / 255;
              n += 1;
            }
          }
          return n ? sum / n : -1;
        },
      );

  it('draws the trend in the colours of the scheme in use, switching with it, its axis labels light in dark mode', async () => {
    const page = await ui.adminPage();
    await page.goto(`${ui.base}/projects/${projectId}`);
    // The trend of the default stream, nightly · main: the last run, named with a time, not a build number, is a
    // stream of its own.
    await page.getByRole('img', { name: /^Pass rate over the last 11 runs/ }).waitFor();
    await page.locator('.chart canvas').waitFor();
    const light = await eventually(async () => {
      const lightness = await axisLightness(page);
      return lightness >= 0 ? lightness : undefined;
    }, 5_000);
    expect(light).toBeLessThan(0.5);
    // The system turns dark with the page open: the chart is drawn again, its labels light on the dark surface.
    await page.emulateMedia({ colorScheme: 'dark' });
    const dark = await eventually(async () => {
      const lightness = await axisLightness(page);
      return lightness > 0.6 ? lightness : undefined;
    }, 5_000);
    expect(dark).toBeGreaterThan(0.6);
    await ui.shoot(page, 'runs-dark');
    await page.screenshot({
      path: join(SHOTS, 'trend-dark.png'),
      clip: (await page.locator('.chart').boundingBox())!,
    });
    await page.setViewportSize(WIDTHS.phone);
    await page.screenshot({
      path: join(SHOTS, 'trend-dark-phone.png'),
      clip: (await page.locator('.chart').boundingBox())!,
    });
    await page.emulateMedia({ colorScheme: 'light' });
    await page.context().close();
  }, 60_000);
});
