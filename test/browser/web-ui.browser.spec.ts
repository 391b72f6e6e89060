import { randomUUID } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { generate } from 'otplib';
import { type BrowserContext, type Page } from 'playwright-core';
import { eventually } from '../support/http.js';
import { parseMessage, tokenIn } from '../support/smtp.js';
import { ADMIN, SHOTS, WebHarness, WIDTHS } from './harness.js';

describe('The web UI in Chromium, against the built service on embedded defaults', () => {
  const ui = new WebHarness();
  const newPage = (context?: BrowserContext) => ui.newPage(context);
  const signIn = (page: Page, username: string, password: string) => ui.signIn(page, username, password);
  const check = (page: Page, name: string) => ui.check(page, name);
  const shoot = (page: Page, name: string) => ui.shoot(page, name);
  const adminApi = () => ui.api();

  it('signs the bootstrap admin in, shows the admin pages, and lists a failed sign-in in the audit', async () => {
    const page = await newPage();
    await page.goto(ui.base);
    await page.waitForURL(/\/sign-in/);
    await check(page, 'sign-in');
    await signIn(page, ADMIN, 'not the password');
    await page.getByRole('alert').waitFor();
    expect(await page.getByRole('alert').textContent()).toContain('Invalid username or password');
    await check(page, 'sign-in-error');
    await signIn(page, ADMIN, ui.adminPassword);
    await page.getByRole('heading', { name: 'Projects' }).waitFor();
    await check(page, 'projects-empty');
    await page.getByRole('link', { name: 'Admin' }).click();
    await page.getByRole('heading', { name: 'Users' }).waitFor();
    await check(page, 'admin-users');
    await page.goto(`${ui.base}/admin/audit?type=LOGIN_FAILURE`);
    await page.getByRole('cell', { name: 'LOGIN_FAILURE' }).first().waitFor();
    expect(await page.getByRole('cell', { name: ADMIN }).count()).toBeGreaterThan(0);
    await check(page, 'admin-audit');
    await page.getByRole('link', { name: 'Subscription' }).click();
    await page.getByRole('heading', { name: 'Subscription' }).waitFor();
    await check(page, 'admin-subscription');
    await page.context().close();
  }, 90_000);

  it('lets an admin create a group and bind a project to it', async () => {
    const page = await newPage();
    await signIn(page, ADMIN, ui.adminPassword);
    await page.getByRole('heading', { name: 'Projects' }).waitFor();
    // A project to bind (the projects pages are part 2 of the UI).
    const token = await page.evaluate(async () => {
      const res = await fetch('/api/auth/refresh', { method: 'POST' });
      return ((await res.json()) as { accessToken: string }).accessToken;
    });
    const project = await fetch(`${ui.base}/api/projects`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ key: 'WEB', name: 'Web shop' }),
    });
    expect(project.status).toBe(201);
    await page.goto(`${ui.base}/admin/groups`);
    await page.getByLabel('New group name').fill('QA-Team');
    await page.getByRole('button', { name: 'Create group' }).click();
    await page.getByLabel('Project', { exact: true }).selectOption({ label: 'Web shop' });
    await page.getByLabel('Role', { exact: true }).selectOption('REPORTER');
    await page.getByRole('button', { name: 'Bind project' }).click();
    await page.getByText('Web shop: REPORTER').waitFor();
    await check(page, 'admin-groups');
    await page.context().close();
  }, 60_000);

  it('registers a user through the mail outbox, who creates, uses and revokes an API key', async () => {
    const page = await newPage();
    await page.goto(`${ui.base}/register`);
    await check(page, 'register');
    await page.getByLabel('Full name').fill('Nora Newcomer');
    await page.getByLabel('Email').fill('nora@example.com');
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.getByText('Check your inbox').waitFor();
    const outbox = join(ui.dataDir, 'outbox');
    const file = await eventually(async () =>
      existsSync(outbox) ? readdirSync(outbox).find((f) => f.endsWith('-verification.eml')) : undefined,
    );
    const link = tokenIn(parseMessage(readFileSync(join(outbox, file), 'utf8')));
    await page.goto(`${ui.base}/verify-email?token=${link}`);
    await check(page, 'verify-email');
    await page.getByLabel('New password').fill('nora-long-passphrase');
    await page.getByLabel('Repeat the password').fill('nora-long-passphrase');
    await page.getByRole('button', { name: 'Verify and set password' }).click();
    await page.getByText('Your address is verified').waitFor();

    await signIn(page, 'nora@example.com', 'nora-long-passphrase');
    await page.getByRole('heading', { name: 'Projects' }).waitFor();
    expect(await page.getByRole('link', { name: 'Admin' }).count()).toBe(0);
    await page.goto(`${ui.base}/admin/users`);
    await page.getByRole('heading', { name: 'Not allowed' }).waitFor();
    await check(page, 'admin-not-allowed');
    await page.goto(`${ui.base}/no/such/page`);
    await page.getByRole('heading', { name: 'Page not found' }).waitFor();
    await check(page, 'not-found');
    await page.goto(`${ui.base}/profile/api-keys`);
    await page.getByText('No API keys yet.').waitFor();
    await check(page, 'api-keys-empty');
    await page.getByLabel('Name', { exact: true }).fill('nightly CI');
    await page.getByRole('button', { name: 'Create key' }).click();
    const key = (await page.getByTestId('new-token').textContent())!.trim();
    expect(await page.getByText('you will not see it again').count()).toBe(1);
    await check(page, 'api-keys-created');
    // On a phone each key is a stacked row: its Revoke in view, not past the screen's edge in a table to scroll.
    await page.setViewportSize(WIDTHS.phone);
    const revoke = (await page.getByRole('button', { name: 'Revoke nightly CI' }).boundingBox())!;
    expect(revoke.x + revoke.width).toBeLessThanOrEqual(WIDTHS.phone.width);
    await page.setViewportSize(WIDTHS.desktop);
    // Dark, as the system asks.
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.screenshot({ path: join(SHOTS, 'api-keys-created-dark.png'), fullPage: true });
    await page.emulateMedia({ colorScheme: 'light' });
    const me = await fetch(`${ui.base}/api/auth/me`, { headers: { authorization: `Bearer ${key}` } });
    expect(((await me.json()) as { email: string }).email).toBe('nora@example.com');
    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: 'Revoke nightly CI' }).click();
    await page.getByText('No API keys yet.').waitFor();
    expect(
      (await fetch(`${ui.base}/api/auth/me`, { headers: { authorization: `Bearer ${key}` } })).status,
    ).toBe(401);
    await page.context().close();
  }, 90_000);

  it('accepts a workspace invitation from its mail, creating the account, and lets an admin disable it', async () => {
    const admin = await newPage();
    await signIn(admin, ADMIN, ui.adminPassword);
    await admin.getByRole('heading', { name: 'Projects' }).waitFor();
    const status = await admin.evaluate(async () => {
      const refreshed = (await (await fetch('/api/auth/refresh', { method: 'POST' })).json()) as {
        accessToken: string;
      };
      const res = await fetch('/api/workspace/invitations', {
        method: 'POST',
        headers: { authorization: `Bearer ${refreshed.accessToken}`, 'content-type': 'application/json' },
        body: JSON.stringify({ email: 'ines@example.com' }),
      });
      return res.status;
    });
    expect(status).toBe(202);
    const outbox = join(ui.dataDir, 'outbox');
    const file = await eventually(async () =>
      existsSync(outbox)
        ? readdirSync(outbox).find((f) => f.endsWith('-workspace-invitation.eml'))
        : undefined,
    );
    const token = tokenIn(parseMessage(readFileSync(join(outbox, file), 'utf8')));
    const page = await newPage();
    await page.goto(`${ui.base}/invitations/accept?token=${token}`);
    await check(page, 'accept-invitation');
    await page.getByLabel('Full name (new accounts)').fill('Ines Invited');
    await page.getByLabel('Password (new accounts)').fill('ines-long-passphrase');
    await page.getByRole('button', { name: 'Accept invitation' }).click();
    await page.getByText('Your account is ready.').waitFor();
    await signIn(page, 'ines@example.com', 'ines-long-passphrase');
    await page.getByRole('heading', { name: 'Projects' }).waitFor();

    await admin.goto(`${ui.base}/admin/users`);
    await admin.getByLabel('Search by name or email').fill('ines');
    await admin.getByRole('cell', { name: 'ines@example.com' }).waitFor();
    admin.once('dialog', (dialog) => void dialog.accept());
    // A controlled checkbox: it shows the new state once the service has stored it.
    await admin.getByLabel('Ines Invited may sign in').click();
    await eventually(async () =>
      (await admin.getByLabel('Ines Invited may sign in').isChecked()) ? undefined : true,
    );
    await signIn(page, 'ines@example.com', 'ines-long-passphrase');
    await page.getByRole('alert').waitFor();
    await admin.context().close();
    await page.context().close();
  }, 90_000);

  it('keeps two tabs signed in when both reload at once over a slow network (they take turns to refresh)', async () => {
    const context = await ui.browser.newContext({ viewport: WIDTHS.desktop });
    const [one, two] = [await newPage(context), await newPage(context)];
    await signIn(one, ADMIN, ui.adminPassword);
    await one.getByRole('heading', { name: 'Projects' }).waitFor();
    // Latency makes the two tabs' refreshes on reload overlap: without the lock both would present the same
    // refresh token, the second would count as a reuse, and the family (both tabs) would be signed out.
    for (const page of [one, two]) {
      const cdp = await context.newCDPSession(page);
      await cdp.send('Network.enable');
      await cdp.send('Network.emulateNetworkConditions', {
        offline: false,
        latency: 150,
        downloadThroughput: -1,
        uploadThroughput: -1,
      });
    }
    await two.goto(`${ui.base}/profile/api-keys`);
    await two.getByRole('heading', { name: 'API keys' }).waitFor();
    for (let i = 0; i < 4; i++) {
      await Promise.all([one.reload(), two.reload()]);
      await Promise.all([
        one.getByRole('heading', { name: 'Projects' }).waitFor(),
        two.getByRole('heading', { name: 'API keys' }).waitFor(),
      ]);
    }
    expect([one.url(), two.url()].some((url) => url.includes('/sign-in'))).toBe(false);
    await context.close();
  }, 90_000);

  it("shows a project's runs live as results arrive through V1 and V2, and a run's failures with their trace", async () => {
    const page = await newPage();
    await signIn(page, ADMIN, ui.adminPassword);
    await page.getByRole('heading', { name: 'Projects' }).waitFor();
    await page.getByLabel('Key').fill('LIVEUI');
    await page.getByLabel('Name', { exact: true }).fill('Live UI');
    await page.getByRole('button', { name: 'Create project' }).click();
    await page.waitForURL(/\/projects\/\d+$/);
    const projectId = Number(new URL(page.url()).pathname.split('/').pop());
    await page.getByText('● Live').waitFor();
    await check(page, 'project-runs-empty');

    // Results from outside the browser, through the API: the page shows them without a reload.
    const call = await adminApi();
    const post = async (path: string, body: object) => (await call('POST', path, body))!;
    const run = await post(`/api/projects/${projectId}/runs`, { name: 'nightly 1' });
    await page.getByRole('link', { name: 'nightly 1', exact: true }).waitFor();
    await post(`/api/runs/${run.id}/results`, {
      results: [
        { name: 'adds to cart', suite: 'Cart', status: 'PASSED', durationMs: 12 },
        {
          name: 'pays by card',
          suite: 'Checkout',
          status: 'FAILED',
          message: 'expected 200 but was 500',
          trace: 'at pay (checkout.ts:42)',
        },
      ],
    });
    await page.getByRole('img', { name: /^2 results: 1 passed, 1 failed/ }).waitFor();
    const uuid = randomUUID();
    await post(`/api/v2/projects/${projectId}/runs`, { uuid, name: 'stream 2' });
    await post(`/api/v2/projects/${projectId}/runs/${uuid}/results`, {
      results: [{ uuid: randomUUID(), name: 'streams', status: 'PASSED' }],
    });
    await page.getByRole('link', { name: 'stream 2', exact: true }).waitFor();
    await page.getByRole('img', { name: /^1 result: 1 passed/ }).waitFor();
    await check(page, 'project-runs');

    await page.getByRole('link', { name: 'nightly 1', exact: true }).click();
    await page.getByRole('heading', { name: 'nightly 1' }).waitFor();
    await page.getByLabel('Status').selectOption('FAILED');
    await page.getByRole('link', { name: 'adds to cart' }).waitFor({ state: 'detached' });
    await page.getByRole('link', { name: 'pays by card' }).click();
    await page.getByText('at pay (checkout.ts:42)').waitFor();
    await check(page, 'run-failures');

    // A JUnit report through the import page: progress, counts, then its run.
    await page.goto(`${ui.base}/projects/${projectId}`);
    await page.getByRole('link', { name: 'Import a report' }).click();
    await page.getByRole('heading', { name: 'Import a report' }).waitFor();
    await check(page, 'import');
    await page.getByLabel('Drop a report here, or choose one').setInputFiles({
      name: 'TEST-shop.xml',
      mimeType: 'application/xml',
      buffer: Buffer.from(
        '<testsuite name="shop"><testcase classname="Shop" name="lists"/><testcase classname="Shop" name="sells">' +
          '<failure message="out of stock">at sell (shop.ts:7)</failure></testcase><testcase classname="Shop" name="later"><skipped/></testcase></testsuite>',
      ),
    });
    await page.getByLabel('Run name (optional)').fill('imported from the page');
    await page.getByRole('button', { name: 'Import' }).click();
    await page.getByText('Imported 3 results (junit): 1 passed, 1 failed, 0 broken, 1 skipped.').waitFor();
    await check(page, 'import-done');
    await page.getByRole('link', { name: 'Open the run' }).click();
    await page.getByRole('heading', { name: 'imported from the page' }).waitFor();
    await page.getByRole('link', { name: 'sells' }).click();
    await page.getByText('at sell (shop.ts:7)').waitFor();

    // The test's history: a second import where it passes flips it; its health (issue #36: the two imports are runs
    // of two streams, between which a flip is not counted, and two runs are fewer than the policy's minimum), a
    // strip, a chart, its last failure.
    await page.goto(`${ui.base}/projects/${projectId}/import`);
    await page.getByLabel('Drop a report here, or choose one').setInputFiles({
      name: 'TEST-shop-2.xml',
      mimeType: 'application/xml',
      buffer: Buffer.from(
        '<testsuite name="shop"><testcase classname="Shop" name="sells" time="0.4"/></testsuite>',
      ),
    });
    await page.getByRole('button', { name: 'Import' }).click();
    await page.getByRole('link', { name: 'Open the run' }).click();
    await page.getByRole('link', { name: 'sells' }).click();
    await page.getByRole('link', { name: 'History of this test' }).click();
    await page.getByRole('heading', { name: 'sells' }).waitFor();
    await page.getByText('Its outcome changed 1 time in these runs.').waitFor();
    const health = page.getByRole('region', { name: 'Health' });
    await health.getByText('over 2 runs').waitFor();
    await page.locator('.page-head .state-badge').waitFor();
    expect(await page.locator('.strip li').count()).toBe(2);
    // The chart's code loads when first shown.
    await page.locator('.chart canvas').waitFor();
    expect(await page.locator('.chart canvas').count()).toBe(1);
    await page.getByText('out of stock').waitFor();
    await check(page, 'test-history');
    await page.context().close();
  }, 90_000);

  it('lists projects with their latest run, filters runs in the URL, groups failures, compares two runs, manages members', async () => {
    const call = await adminApi();
    const project = (await call('POST', '/api/projects', { key: 'CMP', name: 'Checkout service' }))!;
    const push = async (name: string, results: object[], commit: string) => {
      const run = (await call('POST', `/api/projects/${project.id}/runs`, {
        name,
        attributes: { branch: 'main', commit },
      }))!;
      await call('POST', `/api/runs/${run.id}/results`, { results });
      await call('POST', `/api/runs/${run.id}/finish`, {});
      return run.id;
    };
    // One cause: the same message (numbers aside) from the same place in the code (its line aside), so one group.
    const refused = (i: number) => ({
      name: `orders ${i}`,
      suite: 'Orders',
      status: 'BROKEN',
      message: `Connection refused: db:5432 after ${100 + i} ms`,
      trace: `Error: connect ECONNREFUSED\n    at placeOrder (orders.spec.ts:${10 + i})`,
    });
    const base1 = await push(
      'main #41',
      [
        { name: 'adds to cart', suite: 'Cart', status: 'PASSED', durationMs: 20 },
        { name: 'pays by card', suite: 'Checkout', status: 'FAILED', message: 'expected 200 but was 500' },
        { name: 'ships', suite: 'Shipping', status: 'PASSED', durationMs: 30 },
      ],
      'c41',
    );
    const head = await push(
      'main #42',
      [
        {
          name: 'adds to cart',
          suite: 'Cart',
          status: 'FAILED',
          message: 'expected 3 items but got 2',
          durationMs: 25,
        },
        { name: 'pays by card', suite: 'Checkout', status: 'PASSED', durationMs: 40 },
        { name: 'refunds', suite: 'Checkout', status: 'PASSED', durationMs: 15 },
        ...Array.from({ length: 6 }, (_, i) => refused(i)),
      ],
      'c42',
    );

    const page = await newPage();
    await signIn(page, ADMIN, ui.adminPassword);
    const row = page.getByTestId(`project-${project.id}`);
    await row.getByRole('link', { name: 'main #42', exact: true }).waitFor();
    await row.getByText('22.2%').waitFor();
    await check(page, 'projects');

    // The runs page: a filter by name, held in the URL through a reload.
    await row.getByRole('link', { name: 'Checkout service' }).click();
    await page.getByRole('img', { name: /^Pass rate over the last 2 runs/ }).waitFor();
    await page.getByLabel('Name').fill('#41');
    await page.waitForURL(/\?q=%2341$/);
    await page.getByRole('link', { name: 'main #42', exact: true }).waitFor({ state: 'detached' });
    await page.reload();
    await page.getByRole('link', { name: 'main #41', exact: true }).waitFor();
    expect(await page.getByLabel('Name').inputValue()).toBe('#41');
    expect(await page.getByRole('link', { name: 'main #42', exact: true }).count()).toBe(0);
    await page.getByLabel('Name').fill('nothing like it');
    await page.getByText('No runs match these filters.').waitFor();
    await check(page, 'project-runs-no-match');

    // A run: six failures of one cause are one group; the group filters the table; a trace opens beside it.
    await page.goto(`${ui.base}/runs/${head}`);
    const groups = page.getByRole('region', { name: 'Failures by cause' });
    // Labelled by its first message, the normalised key as the tooltip.
    const label = groups.getByText('Connection refused: db:5432 after 100 ms');
    await label.waitFor();
    expect(await label.getAttribute('title')).toBe(
      'Connection refused: db:<n> after <n> ms @ placeOrder (orders.spec.ts)',
    );
    await groups.getByText('6 tests · 6 broken').waitFor();
    await check(page, 'run');
    await groups.getByRole('button', { name: 'Show the 6 failures of this group' }).click();
    await page.getByText('6 results', { exact: true }).waitFor();
    expect(page.url()).toContain('group=Connection+refused');
    await page.getByRole('link', { name: 'orders 3' }).click();
    await page.getByRole('heading', { name: 'orders 3' }).waitFor();
    await page.getByText('at placeOrder (orders.spec.ts:13)').waitFor();
    await check(page, 'run-group-trace');
    await page.getByRole('link', { name: /^← Results of main #42/ }).click();
    await page.getByRole('button', { name: 'Show all results' }).click();
    await page.getByText('9 results', { exact: true }).waitFor();
    await page.getByLabel('Status').selectOption('FAILED,BROKEN');
    await page.getByText('7 results', { exact: true }).waitFor();
    await page.getByRole('button', { name: /^Duration/ }).click();
    await page.getByText('7 results, by Duration ascending', { exact: true }).waitFor();
    expect(new URL(page.url()).search).toBe('?status=FAILED%2CBROKEN&sort=durationMs%2Casc');

    // Compared with the run before: the new failure, the fix, the added and removed tests.
    await page.getByRole('link', { name: 'Compare with the run before' }).click();
    await page.getByRole('heading', { name: 'Compare main #42' }).waitFor();
    expect(await page.getByLabel('Compared with').inputValue()).toBe(String(base1));
    await page.getByRole('button', { name: '1 New failures' }).waitFor();
    const newFailure = page.getByRole('row', { name: /adds to cart/ });
    await newFailure.getByText('expected 3 items but got 2').waitFor();
    expect(await newFailure.getByText('passed').count()).toBe(1);
    await check(page, 'compare');
    await page.getByRole('button', { name: '1 Fixed' }).click();
    await page.getByRole('row', { name: /pays by card/ }).waitFor();
    await page.getByRole('button', { name: '7 Added' }).click();
    await page.getByRole('row', { name: /refunds/ }).waitFor();
    await page.getByRole('button', { name: '1 Removed' }).click();
    await page.getByRole('row', { name: /ships/ }).waitFor();
    expect(new URL(page.url()).search).toBe(`?change=REMOVED&base=${base1}`);

    // Members: the owner sees themself, invites a reporter by email.
    await page.goto(`${ui.base}/projects/${project.id}/members`);
    await page.getByRole('cell', { name: /Administrator \(you\)/ }).waitFor();
    await page.getByLabel('Email').fill('reporter@example.com');
    await page.getByLabel('Role', { exact: true }).selectOption('REPORTER');
    await page.getByRole('button', { name: 'Send invitation' }).click();
    await page.getByText('Invitation sent to reporter@example.com as reporter.').waitFor();
    await check(page, 'members');

    // A run that does not exist: the API's message, not a blank page.
    // (The results' own read may fail first, with the same message, under the table's header: the page is the run's
    // error once the run's read has failed.)
    await page.goto(`${ui.base}/runs/999999`);
    await page.getByRole('heading', { name: 'Run not found' }).waitFor();
    await page.getByRole('alert').filter({ hasText: 'Run 999999 not found' }).waitFor();
    expect(await page.getByRole('table').count()).toBe(0);
    await check(page, 'run-not-found');
    await page.context().close();
  }, 90_000);

  it("says what each part of a page waits for while the API is slow, and shows the API's message when it fails", async () => {
    const UNAVAILABLE = {
      status: 503,
      contentType: 'application/json',
      body: JSON.stringify({
        status: 503,
        error: 'Service Unavailable',
        message: 'The database is unavailable',
      }),
    };
    const call = await adminApi();
    const project = (await call('POST', '/api/projects', { key: 'SLOW', name: 'Slow network' }))!;
    const run = (await call('POST', `/api/projects/${project.id}/runs`, { name: 'nightly #7' }))!;
    await call('POST', `/api/runs/${run.id}/results`, {
      results: [{ name: 'boots', suite: 'Smoke', status: 'FAILED', message: 'timed out after 30 s' }],
    });
    const page = await newPage();
    await signIn(page, ADMIN, ui.adminPassword);
    await page.getByRole('heading', { name: 'Projects' }).waitFor();

    // Every read of the run held until released: the page says what it is loading.
    const RUN_API = /\/api\/runs\/\d+(\/|\?|$)/;
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    await page.route(RUN_API, async (route) => {
      await held;
      await route.continue();
    });
    await page.goto(`${ui.base}/runs/${run.id}`);
    await page.getByRole('status').filter({ hasText: 'Loading the run' }).waitFor();
    await shoot(page, 'run-loading');
    release();
    await page.getByRole('cell', { name: 'boots' }).waitFor();
    await page.unroute(RUN_API);

    // The results failing while the run itself answers: the table says why, the rest of the page stays.
    await page.route(/\/api\/runs\/\d+\/results/, (route) => route.fulfill(UNAVAILABLE));
    await page.reload();
    await page.getByRole('alert').filter({ hasText: 'The database is unavailable' }).first().waitFor();
    // (The run and its results are read side by side: either may answer first.)
    await page.getByRole('heading', { name: 'nightly #7' }).waitFor();
    await check(page, 'run-error');

    // The projects list held, then failing.
    let releaseList!: () => void;
    const listHeld = new Promise<void>((resolve) => (releaseList = resolve));
    await page.route(/\/api\/projects\?/, async (route) => {
      await listHeld;
      await route.fulfill(UNAVAILABLE);
    });
    await page.goto(`${ui.base}/projects`);
    await page.getByRole('status').filter({ hasText: 'Loading projects' }).waitFor();
    await shoot(page, 'projects-loading');
    releaseList();
    await page.getByRole('alert').filter({ hasText: 'The database is unavailable' }).waitFor();
    await check(page, 'projects-error');
    await page.context().close();
  }, 90_000);

  it('enrols two-factor from the page, then signs in with a code and with a recovery code', async () => {
    const page = await newPage();
    await signIn(page, ADMIN, ui.adminPassword);
    await page.getByRole('heading', { name: 'Projects' }).waitFor();
    await page.getByRole('link', { name: 'Security' }).click();
    await check(page, 'security-off');
    await page.getByRole('button', { name: 'Set up two-factor' }).click();
    const secret = (await page.getByTestId('totp-secret').textContent())!.trim();
    const codes = (await page.getByTestId('recovery-codes').locator('code').allTextContents()).map((c) =>
      c.trim(),
    );
    expect(codes).toHaveLength(10);
    await check(page, 'security-enrol');
    await page.getByLabel('6-digit code from the app').fill(await generate({ secret }));
    await page.getByRole('button', { name: 'Activate' }).click();
    await page.getByText('Two-factor authentication is on').waitFor();
    await check(page, 'security-on');
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(/\/sign-in/);

    // With a code from the app: the next time step's (the activation used the current one, and a code is good
    // once; the service accepts one step of drift).
    await page.getByLabel('Email or user name').fill(ADMIN);
    await page.getByLabel('Password').fill(ui.adminPassword);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByLabel('Code').waitFor();
    await check(page, 'sign-in-code');
    await page.getByLabel('Code').fill(await generate({ secret, epoch: Math.floor(Date.now() / 1000) + 30 }));
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.getByRole('heading', { name: 'Projects' }).waitFor();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(/\/sign-in/);
    // And with a recovery code, which is then used up.
    await signIn(page, ADMIN, ui.adminPassword);
    await page.getByLabel('Code').fill(codes[0]);
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.getByRole('heading', { name: 'Projects' }).waitFor();
    await page.goto(`${ui.base}/profile/security`);
    await page.getByText('9 of 10 recovery codes left').waitFor();
    await page.context().close();
  }, 90_000);
});
