// The web UI: the run page's time to show the first results of a run of --web-results results in Chromium, from
// navigation to the first rows painted, and the size of the JavaScript the app loads on first load (gzipped).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { chromium } from 'playwright-core';
import { fmt } from '../lib/report.mjs';
import { median } from '../lib/stats.mjs';

export const name = 'web';
export const title =
  "Web UI: a 100,000-result run's first rows in Chromium, and the app's JavaScript on first load";

const FIRST_ROWS_TARGET_MS = 1000;
const JS_TARGET_KB = 250;
const WEB_DIST = join(import.meta.dirname, '..', '..', 'web', 'dist');

/**
 * The JavaScript a first load fetches: the entry script of index.html and the chunks it names for preloading (its
 * static imports). Chunks loaded on demand (the charts) are not in it. Gzipped at level 6, as served by a proxy.
 */
export function firstLoadJs(dist = WEB_DIST) {
  const html = readFileSync(join(dist, 'index.html'), 'utf8');
  const files = [
    ...html.matchAll(/<(?:script[^>]*\ssrc|link[^>]*rel="modulepreload"[^>]*\shref)="\/([^"]+\.js)"/g),
  ].map((m) => m[1]);
  const sizes = files.map((file) => {
    const bytes = readFileSync(join(dist, file));
    return { file, raw: bytes.length, gzip: gzipSync(bytes, { level: 6 }).length };
  });
  return {
    files: sizes,
    gzip: sizes.reduce((s, f) => s + f.gzip, 0),
    raw: sizes.reduce((s, f) => s + f.raw, 0),
  };
}

async function seedRun(service, token, count) {
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const post = async (path, body) => {
    const res = await fetch(`${service.url}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
    if (!res.ok) {
      throw new Error(`POST ${path}: ${res.status} ${await res.text()}`);
    }
    return res.json();
  };
  const project = await post('/api/projects', { key: `WEB_${Date.now() % 1e9}`, name: 'Web bench' });
  const run = await post(`/api/projects/${project.id}/runs`, {
    name: 'web bench run',
    attributes: { commit: 'b1' },
  });
  for (let b = 0; b < count; b += 1000) {
    const results = [];
    for (let k = b; k < Math.min(count, b + 1000); k++) {
      const failed = k % 97 === 0;
      results.push({
        name: `case ${k}`,
        suite: `Module ${k % 40}`,
        status: failed ? 'FAILED' : k % 50 === 0 ? 'SKIPPED' : 'PASSED',
        durationMs: k % 1000,
        ...(failed
          ? {
              message: `expected ${k} to equal ${k + 1}`,
              trace: `AssertionError\n    at case${k} (module.spec.ts:${k % 300})`,
            }
          : {}),
      });
    }
    await post(`/api/runs/${run.id}/results`, { results });
  }
  await post(`/api/runs/${run.id}/finish`, {});
  return run.id;
}

/** Navigates to the run page and resolves with the ms from navigation start to the first row's paint. */
async function firstRows(page, url) {
  await page.goto(url, { waitUntil: 'commit' });
  await page.getByRole('button', { name: 'case 0', exact: true }).waitFor();
  // Two animation frames after the row is in the document: it has been painted. performance.now() counts from the
  // navigation's start. (A function, not a string: the app's CSP refuses string evaluation.)
  return page.evaluate(
    () =>
      new Promise((resolve) =>
        requestAnimationFrame(() => requestAnimationFrame(() => resolve(performance.now()))),
      ),
  );
}

export async function run(ctx) {
  const js = firstLoadJs();
  ctx.log(
    `first-load JavaScript: ${js.files.map((f) => `${f.file} ${(f.gzip / 1024).toFixed(1)} KB gz`).join(', ')}`,
  );

  const service = await ctx.service();
  const token = await service.login();
  ctx.log(`storing a run of ${ctx.options.webResults} results…`);
  const runId = await seedRun(service, token, ctx.options.webResults);
  // localhost, not 127.0.0.1: the refresh cookie is Secure, which browsers accept on localhost over http.
  const base = service.url.replace('127.0.0.1', 'localhost');
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: ['--no-sandbox'],
  });
  try {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    await page.goto(`${base}/sign-in`);
    await page.getByLabel('Email or user name').fill(service.admin.email);
    await page.getByLabel('Password').fill(service.admin.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Projects' }).waitFor();
    const url = `${base}/runs/${runId}`;

    // Without the browser's cache: the app's files fetched again, as on a first visit.
    const cdp = await context.newCDPSession(page);
    await cdp.send('Network.setCacheDisabled', { cacheDisabled: true });
    const cold = [];
    for (let i = 0; i < ctx.options.webRounds; i++) {
      cold.push(await firstRows(page, url));
    }
    await cdp.send('Network.setCacheDisabled', { cacheDisabled: false });
    await firstRows(page, url);
    const warm = [];
    for (let i = 0; i < ctx.options.webRounds; i++) {
      warm.push(await firstRows(page, url));
    }
    const coldMs = median(cold);
    const warmMs = median(warm);
    ctx.log(
      `first rows, no cache: ${cold.map((t) => t.toFixed(0)).join(', ')} ms; cached: ${warm.map((t) => t.toFixed(0)).join(', ')} ms`,
    );
    return {
      summary: [
        {
          metric: `run page, first rows of ${ctx.options.webResults.toLocaleString('en')} results (no cache, median)`,
          value: coldMs,
          unit: 'ms',
          digits: 0,
          target: `< ${FIRST_ROWS_TARGET_MS}`,
          ok: coldMs < FIRST_ROWS_TARGET_MS,
        },
        {
          metric: 'run page, first rows (app cached, median)',
          value: warmMs,
          unit: 'ms',
          digits: 0,
          target: `< ${FIRST_ROWS_TARGET_MS}`,
          ok: warmMs < FIRST_ROWS_TARGET_MS,
        },
        {
          metric: 'JavaScript on first load (gzipped)',
          value: js.gzip / 1024,
          unit: 'KB',
          digits: 1,
          target: `< ${JS_TARGET_KB}`,
          ok: js.gzip / 1024 < JS_TARGET_KB,
        },
      ],
      tables: [
        {
          title: 'Navigation to the first rows painted (ms), each round',
          headers: ['round', 'no cache', 'cached'],
          rows: cold.map((c, i) => [String(i + 1), fmt(c, 0), fmt(warm[i], 0)]),
        },
        {
          title: 'First-load JavaScript',
          headers: ['file', 'bytes', 'gzipped'],
          rows: js.files.map((f) => [f.file, String(f.raw), String(f.gzip)]),
        },
      ],
      data: { results: ctx.options.webResults, coldMs: cold, warmMs: warm, js },
    };
  } finally {
    await browser.close();
  }
}
