import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { AxeBuilder } from '@axe-core/playwright';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { freePort, runService, type ServiceProcess, waitForHttp } from '../support/process.js';
import { Scratch } from '../support/scratch.js';

/** Where the run's screenshots go (git-ignored; the README names it): every page at both widths. */
export const SHOTS = join(process.cwd(), 'screenshots');
export const WIDTHS = { desktop: { width: 1280, height: 800 }, phone: { width: 390, height: 844 } };
export const ADMIN = 'admin@tms.local';

/** `call(method, path, body)` against the API as one user: answers the JSON body (the test fails on a non-2xx). */
export type ApiCall = (method: string, path: string, body?: object) => Promise<{ id: number } | undefined>;

/**
 * The built service on embedded defaults and a headless Chromium, for one browser test file: call it inside the
 * file's `describe`; it registers the beforeAll/afterAll that start and stop both. Its fields are set once the
 * beforeAll has run.
 */
export class WebHarness {
  base = '';
  dataDir = '';
  adminPassword = '';
  browser!: Browser;
  private proc?: ServiceProcess;
  private readonly scratch = new Scratch();

  /** `env`: variables the service starts with besides its embedded defaults (e.g. SVC_WEBHOOK_ALLOW_PRIVATE). */
  constructor(env: Record<string, string> = {}) {
    beforeAll(async () => {
      this.dataDir = this.scratch.dir('tms-ui-');
      const port = await freePort();
      this.proc = runService(['--dev-defaults'], {
        SVC_DATA_DIR: this.dataDir,
        PORT: String(port),
        SVC_EMBEDDED_DB_PORT: String(await freePort()),
        ...env,
      });
      // localhost, not 127.0.0.1: the refresh cookie is Secure, which browsers accept on localhost over http.
      this.base = `http://localhost:${port}`;
      await waitForHttp(`${this.base}/api/health/ready`, this.proc);
      this.adminPassword = readFileSync(
        join(this.dataDir, 'secrets', 'bootstrap-admin-password'),
        'utf8',
      ).trim();
      this.browser = await chromium.launch({
        executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
        args: ['--no-sandbox'],
      });
      mkdirSync(SHOTS, { recursive: true });
    }, 120_000);
    afterAll(async () => {
      await this.browser?.close();
      this.proc?.child.kill('SIGTERM');
      await this.proc?.exited;
      this.scratch.cleanup();
    });
  }

  /** A page at desktop width in a context of its own (its own cookies: another browser). */
  async newPage(context?: BrowserContext): Promise<Page> {
    const ctx = context ?? (await this.browser.newContext({ viewport: WIDTHS.desktop }));
    const page = await ctx.newPage();
    page.on('pageerror', (error) => {
      throw error;
    });
    return page;
  }

  async signIn(page: Page, username: string, password: string): Promise<void> {
    await page.goto(`${this.base}/sign-in`);
    await page.getByLabel('Email or user name').fill(username);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
  }

  /** A new page with the bootstrap admin signed in, on the projects list. */
  async adminPage(): Promise<Page> {
    const page = await this.newPage();
    await this.signIn(page, ADMIN, this.adminPassword);
    await page.getByRole('heading', { name: 'Projects' }).waitFor();
    return page;
  }

  /** axe finds no serious or critical violation; then the page at both widths into screenshots/. */
  async check(page: Page, name: string): Promise<void> {
    // Settled: no loading state left on the page.
    // (A locator, not waitForFunction: the app's CSP refuses the evaluation of strings, as it should.)
    await page.locator('.loading').first().waitFor({ state: 'detached' });
    const { violations } = await new AxeBuilder({ page }).analyze();
    const serious = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
    expect(serious.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`)).toEqual([]);
    expect(await page.locator('main').count()).toBe(1);
    expect(await page.title()).toMatch(/ · Test Management$/);
    await this.shoot(page, name);
  }

  /** The page as it is now (a loading state too) at both widths, into screenshots/; never wider than the screen. */
  async shoot(page: Page, name: string): Promise<void> {
    for (const [width, viewport] of Object.entries(WIDTHS)) {
      await page.setViewportSize(viewport);
      await page.screenshot({ path: join(SHOTS, `${name}-${width}.png`), fullPage: true });
      // No sideways scrolling: wide tables scroll inside their own box.
      const pageWidth = await page.locator('html').evaluate((html) => html.scrollWidth);
      expect([name, width, pageWidth]).toEqual([name, width, viewport.width]);
    }
    await page.setViewportSize(WIDTHS.desktop);
  }

  /** The API as a user over fetch (the admin by default), for the data a test needs. */
  async api(username = ADMIN, password = this.adminPassword): Promise<ApiCall> {
    const { accessToken } = (await (
      await fetch(`${this.base}/api/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ username, password }),
      })
    ).json()) as { accessToken: string };
    return async (method, path, body) => {
      const res = await fetch(`${this.base}${path}`, {
        method,
        headers: { authorization: `Bearer ${accessToken}`, 'content-type': 'application/json' },
        body: body ? JSON.stringify(body) : undefined,
      });
      expect([path, res.ok]).toEqual([path, true]);
      // 204, and a 202 that only accepts (a webhook's test ping), have no body.
      const text = await res.text();
      return text ? (JSON.parse(text) as { id: number }) : undefined;
    };
  }
}
