import { type Page } from 'playwright-core';
import { type ApiCall, WebHarness, WIDTHS } from './harness.js';

/**
 * Issue #37 in Chromium against the built service: a project's failures by cause across runs (filters in the URL,
 * assigned to me, a suggestion marked), a failure's own page with its triage form, and the triage of a run's
 * failure groups in one click, at 1280 and 390 px; the loading, empty and error states.
 */
describe('Failure triage in the browser', () => {
  const ui = new WebHarness();
  let api: ApiCall;
  let projectId: number;
  let emptyProject: number;
  let first: number;
  let second: number;
  /** Signature ids by what their message says. */
  const sig: Record<'issuer' | 'acquirer' | 'script' | 'timeout' | 'shipping', number> = {
    issuer: 0,
    acquirer: 0,
    script: 0,
    timeout: 0,
    shipping: 0,
  };

  const SCRIPT =
    '<script>document.title="owned"</script> Cart total was <b>NaN</b> after <img src=x onerror=alert(1)>';
  const TIMEOUT = [
    'TimeoutException: Timed out after 30 seconds waiting for the catalogue page to show its first product tile.',
    'Last screenshot: /tmp/screens/catalogue-1.png',
    'Waited for: css=[data-test="tile"] (visible, enabled)',
    'Page said: Loading the catalogue, please wait while we fetch the latest prices from the pricing service',
    'Console: 3 errors, 12 warnings',
  ].join('\n');
  const declined = (by: string, order: number) => ({
    message: `PaymentDeclinedException: card declined by the ${by} for order ${order}`,
    trace: `com.shop.payments.PaymentDeclinedException: card declined by the ${by}\n\tat com.shop.checkout.Checkout.payByCard(Checkout.java:42)\n\tat org.junit.platform.engine.Frame.run(Frame.java:1)`,
  });

  async function runOf(name: string, results: object[]): Promise<number> {
    const run = (await api('POST', `/api/projects/${projectId}/runs`, {
      name,
      attributes: { branch: 'main' },
    }))!;
    await api('POST', `/api/runs/${run.id}/results`, { results });
    await api('POST', `/api/runs/${run.id}/finish`, {});
    return run.id;
  }

  interface Listed {
    id: number;
    sampleMessage: string | null;
  }
  const failuresOf = async (query = '') =>
    (
      (await api('GET', `/api/projects/${projectId}/failures?size=100${query}`)) as unknown as {
        content: Listed[];
      }
    ).content;

  beforeAll(async () => {
    api = await ui.api();
    const me = (await api('GET', '/api/auth/me'))!;
    projectId = (await api('POST', '/api/projects', { key: 'TRIAGE', name: 'Checkout' }))!.id;
    emptyProject = (await api('POST', '/api/projects', { key: 'CALM', name: 'No failures' }))!.id;
    // A new failure this much like a triaged one inherits its triage (the default is 0.8).
    await api('PATCH', `/api/projects/${projectId}/settings`, { triage: { similarity: 0.6 } });
    const passing = Array.from({ length: 6 }, (_, i) => ({
      name: `passes ${i}`,
      suite: 'Smoke',
      status: 'PASSED',
    }));
    first = await runOf('nightly #1', [
      ...passing,
      { name: 'pays by card', suite: 'Checkout', status: 'FAILED', ...declined('issuer', 4711) },
      { name: 'pays by voucher', suite: 'Checkout', status: 'FAILED', ...declined('issuer', 4712) },
      { name: 'reads the cart', suite: 'Cart', status: 'BROKEN', message: SCRIPT },
      { name: 'loads the catalogue', suite: 'Catalogue', status: 'FAILED', message: TIMEOUT },
    ]);
    let listed = await failuresOf();
    const idOf = (text: string) => listed.find((f) => f.sampleMessage?.includes(text))!.id;
    sig.issuer = idOf('by the issuer');
    sig.script = idOf('Cart total');
    sig.timeout = idOf('Timed out');
    await api('PATCH', `/api/failures/${sig.issuer}`, {
      triage: 'PRODUCT_BUG',
      issue: {
        url: 'https://jira.example.com/browse/SHOP-12',
        key: 'SHOP-12',
        title: 'Cards declined on staging',
      },
      note: 'The issuer sandbox declines every card since the certificate rotation.',
      assigneeId: me.id,
    });
    second = await runOf('nightly #2', [
      ...passing,
      { name: 'pays by card', suite: 'Checkout', status: 'FAILED', ...declined('issuer', 4720) },
      { name: 'pays by voucher', suite: 'Checkout', status: 'FAILED', ...declined('acquirer', 4721) },
      { name: 'reads the cart', suite: 'Cart', status: 'BROKEN', message: SCRIPT },
      {
        name: 'ships the order',
        suite: 'Shipping',
        status: 'FAILED',
        message: 'ConnectException: Connection refused: shipping-service.internal:8080',
      },
    ]);
    listed = await failuresOf();
    sig.acquirer = idOf('by the acquirer');
    sig.shipping = idOf('Connection refused');
  }, 120_000);

  /** The row of signature `id` on the Failures page. */
  const row = (page: Page, id: number) => page.getByTestId(`failure-${id}`);

  it('lists the failures by cause with their triage, a suggestion marked, the filters in the URL, at both widths', async () => {
    const page = await ui.adminPage();
    await page.goto(`${ui.base}/projects/${projectId}`);
    await page.getByRole('navigation', { name: 'Project' }).getByRole('link', { name: 'Failures' }).click();
    await page.waitForURL(new RegExp(`/projects/${projectId}/failures$`));
    await row(page, sig.issuer).waitFor();
    expect(await page.getByText('5 causes of failure').count()).toBe(1);

    // Triaged: its badge, its issue by key in a new tab, its assignee.
    const issuer = row(page, sig.issuer);
    expect(await issuer.locator('.badge').first().textContent()).toBe('Product bug');
    const issue = issuer.getByRole('link', { name: /^SHOP-12/ });
    expect(await issue.getAttribute('href')).toBe('https://jira.example.com/browse/SHOP-12');
    expect(await issue.getAttribute('target')).toBe('_blank');
    expect(await issue.getAttribute('rel')).toBe('noopener noreferrer');
    // Two tests in the first run, one in the second.
    expect(await issuer.getByRole('cell').nth(2).textContent()).toBe('3');
    // Like it, new, and not yet looked at: its triage and issue inherited, said to be a suggestion.
    const acquirer = row(page, sig.acquirer);
    expect(await acquirer.locator('.badge').first().textContent()).toBe('Product bug · suggested');
    await acquirer.getByRole('link', { name: /^SHOP-12/ }).waitFor();
    // Markup in a message is text: shown as sent, nothing of it run or drawn.
    await row(page, sig.script).getByText(SCRIPT).waitFor();
    expect(await page.locator('main script, main img, main b').count()).toBe(0);
    expect(await page.title()).not.toContain('owned');
    // A long message: three lines, the rest a click away.
    const timeout = row(page, sig.timeout);
    await timeout.getByRole('button', { name: 'Show all of the message' }).click();
    await timeout.getByText('Console: 3 errors', { exact: false }).waitFor();
    await ui.check(page, 'failures');

    // Assigned to me in one click, in the URL.
    await page.getByRole('button', { name: 'Assigned to me' }).click();
    await page.waitForURL(/\?assignee=me$/);
    await page.getByText('1 cause of failure').waitFor();
    await row(page, sig.issuer).waitFor();
    await ui.check(page, 'failures-assigned-to-me');
    await page.getByRole('button', { name: 'Assigned to me' }).click();

    // New in the latest run, untriaged, searched: each in the URL, surviving a reload.
    await page.getByRole('button', { name: 'New' }).click();
    await page.getByText('2 causes of failure').waitFor();
    expect(await row(page, sig.shipping).count()).toBe(1);
    expect(await row(page, sig.acquirer).count()).toBe(1);
    await page.getByRole('button', { name: 'New' }).click();
    await page.getByRole('button', { name: 'Untriaged' }).click();
    await page.waitForURL(/triage=TO_INVESTIGATE/);
    // The list before stays until the new one is in: its count says when.
    await page.getByText('3 causes of failure').waitFor();
    await row(page, sig.shipping).waitFor();
    expect(await row(page, sig.issuer).count()).toBe(0);
    await page.getByRole('button', { name: 'Untriaged' }).click();
    await page.getByLabel('Search messages').fill('acquirer');
    await page.waitForURL(/q=acquirer/);
    await page.getByText('1 cause of failure').waitFor();
    await page.reload();
    await row(page, sig.acquirer).waitFor();
    expect(await page.getByLabel('Search messages').inputValue()).toBe('acquirer');
    await page.getByLabel('Sort by').selectOption('occurrences,desc');
    await page.waitForURL(/sort=occurrences%2Cdesc/);

    // None match: said, with the way back.
    await page.getByLabel('Search messages').fill('no such words anywhere');
    await page.getByText('No failures match these filters.').waitFor();
    await ui.check(page, 'failures-none-match');
    await page.getByRole('button', { name: 'Clear the filters' }).click();
    await row(page, sig.issuer).waitFor();
    await page.context().close();
  }, 120_000);

  it('shows the Failures page while it loads, when the project has none, and when the list fails', async () => {
    const page = await ui.adminPage();
    const LIST = /\/api\/projects\/\d+\/failures(\?|$)/;
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    await page.route(LIST, async (route) => {
      await held;
      await route.continue();
    });
    await page.goto(`${ui.base}/projects/${emptyProject}/failures`);
    await page.getByText('Loading failures').waitFor();
    await ui.shoot(page, 'failures-loading');
    release();
    await page.getByText(/^No failures yet/).waitFor();
    await ui.check(page, 'failures-empty');
    await page.unroute(LIST);
    await page.route(LIST, (route) =>
      route.fulfill({
        status: 503,
        contentType: 'application/json',
        body: JSON.stringify({
          status: 503,
          error: 'Service Unavailable',
          message: 'The database is unavailable',
        }),
      }),
    );
    await page.goto(`${ui.base}/projects/${projectId}/failures`);
    await page.getByRole('alert').filter({ hasText: 'The database is unavailable' }).waitFor();
    await ui.check(page, 'failures-error');
    await page.context().close();
  }, 60_000);

  it("opens a failure's page: its runs, tests and similar failures, and triages it with the form", async () => {
    const page = await ui.adminPage();
    await page.goto(`${ui.base}/projects/${projectId}/failures`);
    await row(page, sig.issuer)
      .getByRole('link', { name: /by the issuer/ })
      .click();
    await page.waitForURL(new RegExp(`/failures/${sig.issuer}$`));
    await page.getByRole('heading', { level: 1, name: `Failure #${sig.issuer}` }).waitFor();
    const runs = page.getByRole('region', { name: 'Recent runs' });
    await runs.getByRole('link', { name: 'nightly #2' }).waitFor();
    expect(await runs.getByRole('link', { name: 'nightly #1' }).getAttribute('href')).toBe(`/runs/${first}`);
    const tests = page.getByRole('region', { name: 'Tests it hits most' });
    expect(await tests.getByRole('link').allTextContents()).toEqual(
      expect.arrayContaining(['pays by card', 'pays by voucher']),
    );
    const similar = page.getByRole('region', { name: 'Similar failures' });
    const like = similar.getByRole('link', { name: /by the acquirer/ });
    await like.waitFor();
    expect(await like.getAttribute('href')).toBe(`/projects/${projectId}/failures/${sig.acquirer}`);
    expect(await similar.locator('.similarity').first().textContent()).toMatch(/^\d+%$/);
    const triage = page.getByRole('region', { name: 'Triage' });
    await triage.getByText('The issuer sandbox declines every card').waitFor();
    await ui.check(page, 'failure-detail');

    // A link that is not http(s) is refused before it is sent; a good one saved, shown by its key.
    const form = page.getByRole('form', { name: 'Triage this failure' });
    await form.getByLabel('Link').fill('javascript:alert(1)');
    await form.getByRole('button', { name: 'Save' }).click();
    await form.getByText('An issue link must be an http:// or https:// address.').waitFor();
    await form.getByLabel('Link').fill('https://jira.example.com/browse/SHOP-99');
    await form.getByLabel('Key').fill('SHOP-99');
    await form.getByLabel('Title').fill('Issuer sandbox certificate');
    await form.getByLabel('Triage').selectOption('SYSTEM_ISSUE');
    await form.getByLabel('Note').fill('Sandbox certificate expired; ops ticket SHOP-99.');
    await form.getByText('48 / 2,000 characters').waitFor();
    await form.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Saved.').waitFor();
    await triage.getByRole('link', { name: /^SHOP-99/ }).waitFor();
    expect(await triage.locator('.badge').first().textContent()).toBe('System issue');
    await ui.check(page, 'failure-detail-saved');

    // The suggested one says so, and is confirmed in one click.
    await like.click();
    await page.waitForURL(new RegExp(`/failures/${sig.acquirer}$`));
    const suggestion = page.getByRole('note');
    await suggestion.getByText(/similar: its triage and issue, not confirmed yet/).waitFor();
    await ui.check(page, 'failure-detail-suggested');
    await page.getByRole('button', { name: 'Confirm suggestion' }).click();
    await suggestion.waitFor({ state: 'detached' });
    expect(await page.getByRole('region', { name: 'Triage' }).locator('.badge').first().textContent()).toBe(
      'Product bug',
    );
    await page.context().close();
  }, 120_000);

  it("triages a run's failure groups in one click, new and known ones told apart, at both widths", async () => {
    const page = await ui.adminPage();
    await page.goto(`${ui.base}/runs/${second}`);
    const groups = page.getByRole('region', { name: 'Failures by cause' });
    const group = (id: number) => groups.getByTestId(`group-${id}`);
    // Seen before, since the first run; triaged, its issue a link.
    await group(sig.script)
      .getByText(/^seen since .* in 2 runs$/)
      .waitFor();
    await group(sig.shipping).getByText('New', { exact: true }).waitFor();
    expect(await group(sig.script).getByText(SCRIPT).count()).toBe(1);
    expect(await page.locator('main script, main img, main b').count()).toBe(0);
    await ui.check(page, 'run-triage');

    // One click: the menu, then the triage; it shows on the group at once.
    await group(sig.shipping)
      .getByRole('button', { name: /^Triage/ })
      .click();
    const menu = group(sig.shipping).getByRole('group', { name: /^Triage/ });
    await menu.getByRole('button', { name: 'System issue' }).waitFor();
    await ui.shoot(page, 'run-triage-menu');
    await menu.getByRole('button', { name: 'System issue' }).click();
    await group(sig.shipping).locator('.badge.triage').filter({ hasText: 'System issue' }).waitFor();

    // On a phone: the menu in view, whole.
    await page.setViewportSize(WIDTHS.phone);
    await group(sig.script)
      .getByRole('button', { name: /^Triage/ })
      .click();
    const options = group(sig.script).getByRole('group', { name: /^Triage/ });
    await options.waitFor();
    const box = (await options.boundingBox())!;
    expect(box.x).toBeGreaterThanOrEqual(0);
    expect(box.x + box.width).toBeLessThanOrEqual(WIDTHS.phone.width);
    await options.getByRole('button', { name: 'Automation bug' }).click();
    await group(sig.script).locator('.badge.triage').filter({ hasText: 'Automation bug' }).waitFor();
    await page.setViewportSize(WIDTHS.desktop);
    await ui.check(page, 'run-triaged');
    // Applied to the signature: the Failures page says so too.
    await page.goto(`${ui.base}/projects/${projectId}/failures?triage=AUTOMATION_BUG`);
    await row(page, sig.script).waitFor();
    await page.context().close();
  }, 120_000);
});
