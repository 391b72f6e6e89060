// Report import, end to end over HTTP: a generated JUnit file (100,000 cases, ~47 MB) posted as the raw body to
// POST /api/import/junit, parsed and stored in one transaction, beside the `test-results-parser` package parsing
// the same file in a process of its own (parse only, nothing stored), in the same run on the same Node. Then a
// ~500 MB file, whose import must keep the service's resident memory under 300 MB.
import { spawn } from 'node:child_process';
import { request } from 'node:http';
import { pipeline } from 'node:stream/promises';
import { createReadStream, createWriteStream, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { once } from 'node:events';
import { fmt } from '../lib/report.mjs';
import { median } from '../lib/stats.mjs';
import { onCleanup } from '../lib/processes.mjs';
import { SERVICE_NODE_FLAGS } from '../lib/services.mjs';
import pg from 'pg';
import { from as copyFrom, to as copyTo } from 'pg-copy-streams';

export const name = 'import';
export const title =
  'Import: a JUnit report parsed and stored over HTTP, against test-results-parser parsing it alone';

const RSS_LIMIT_MB = 300;
/** Alternating rounds (import, parse, re-import, parse); the medians of their ratios are reported. */
const ROUNDS = 3;

/** Writes a JUnit report of `cases` test cases in suites of 100: 10% failing with a stack trace, 3% skipped, half with output. */
export async function writeJunit(path, cases) {
  const out = createWriteStream(path);
  const write = async (text) => {
    if (!out.write(text)) {
      await once(out, 'drain');
    }
  };
  const trace = Array.from(
    { length: 18 },
    (_, i) => `\tat com.example.shop.module.Service${i}.handle(Service${i}.java:${40 + i})`,
  ).join('\n');
  await write('<?xml version="1.0" encoding="UTF-8"?>\n<testsuites name="bench">\n');
  for (let i = 0; i < cases; i++) {
    const suite = Math.floor(i / 100);
    if (i % 100 === 0) {
      await write(
        `  <testsuite name="com.example.shop.module${suite}.ServiceTest" tests="100" timestamp="2026-11-25T10:00:00">\n`,
      );
    }
    const head = `    <testcase classname="com.example.shop.module${suite}.ServiceTest" name="handlesRequest_${i}(variant=${i % 7})" time="0.0${i % 90}"`;
    const output =
      i % 2
        ? `<system-out>INFO request ${i} handled in ${i % 90} ms by worker-${i % 8}; cache hit ratio 0.${i % 97}; ${'x'.repeat(400)}</system-out>`
        : '';
    if (i % 10 === 3) {
      await write(
        `${head}><failure message="expected:&lt;200&gt; but was:&lt;500&gt; for request ${i}" type="java.lang.AssertionError">java.lang.AssertionError: expected:&lt;200&gt; but was:&lt;500&gt;\n${trace}</failure>${output}</testcase>\n`,
      );
    } else if (i % 100 === 42 || i % 100 === 77 || i % 100 === 91) {
      await write(`${head}><skipped message="disabled"/></testcase>\n`);
    } else {
      await write(output ? `${head}>${output}</testcase>\n` : `${head}/>\n`);
    }
    if (i % 100 === 99 || i === cases - 1) {
      await write('  </testsuite>\n');
    }
  }
  await write('</testsuites>\n');
  out.end();
  await once(out, 'finish');
}

/** Peak and current resident memory of a process, from /proc (kB → MB). */
function memoryOf(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field) => Number(new RegExp(`^${field}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? 0);
  return { rssMb: kb('VmRSS') / 1024, peakMb: kb('VmHWM') / 1024 };
}

/** A new project of `service`; its id. */
export async function newProject(service, token, label) {
  const project = await fetch(`${service.url}/api/projects`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ key: `IMPORT_${label}`, name: `import ${label}` }),
  }).then((r) => r.json());
  return project.id;
}

/** Imports `path` into `projectId`; the time from the first byte sent to the answer, and the service's peak RSS. */
export async function importFile(service, token, projectId, path) {
  let peakRssMb = memoryOf(service.pid).rssMb;
  const sampler = setInterval(() => {
    peakRssMb = Math.max(peakRssMb, memoryOf(service.pid).rssMb);
  }, 25);
  const started = performance.now();
  // node:http with the file piped in, as curl sends it: fetch's web-stream body cost the client (on the same two
  // cores as the service and PostgreSQL) as much as a third of the import's time.
  const { status, text } = await new Promise((resolve, reject) => {
    const req = request(
      `${service.url}/api/import/junit?projectId=${projectId}`,
      {
        method: 'POST',
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/xml',
          'content-length': String(statSync(path).size),
        },
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode, text: body }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    pipeline(createReadStream(path, { highWaterMark: 256 * 1024 }), req).catch(reject);
  });
  const body = JSON.parse(text);
  const seconds = (performance.now() - started) / 1000;
  clearInterval(sampler);
  if (status !== 201) {
    throw new Error(`POST /api/import/junit answered ${status}: ${text.slice(0, 300)}`);
  }
  return { seconds, counts: body.counts, peakRssMb };
}

/** test-results-parser on the same file, in a Node process of its own (the same binary as the service's). */
async function parseWithTrp(path) {
  const script = `
    const { parse } = require('test-results-parser');
    const started = performance.now();
    const result = parse({ type: 'junit', files: [${JSON.stringify(path)}] });
    const seconds = (performance.now() - started) / 1000;
    console.log(JSON.stringify({ seconds, total: result.total, peakRssMb: process.resourceUsage().maxRSS / 1024 }));`;
  const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  onCleanup(() => child.kill('SIGKILL'));
  let out = '';
  child.stdout.on('data', (chunk) => (out += chunk));
  const [code] = await once(child, 'exit');
  if (code !== 0) {
    throw new Error(`test-results-parser exited ${code}`);
  }
  return JSON.parse(out.trim().split('\n').pop());
}

const IMPORT_ENV = { SVC_IMPORT_MAX_BYTES: '1gb', SVC_HTTP_REQUEST_TIMEOUT: '900s' };

export async function run(ctx) {
  const cases = ctx.options.importCases;
  const dir = mkdtempSync(join(tmpdir(), 'tms-bench-import-'));
  onCleanup(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'TEST-bench.xml');
  ctx.log(`writing a JUnit report of ${cases} cases…`);
  await writeJunit(file, cases);
  const mb = statSync(file).size / 1e6;
  ctx.log(`${mb.toFixed(1)} MB`);

  // Three rounds, each in a service of its own (so that its peak memory is the import's, not another section's
  // or round's): the file imported into a project that has none of its tests, test-results-parser parsing it, the
  // file imported again (a rerun: the tests are known, as every CI run after the first), test-results-parser again.
  // Each import's ratio is to the parse right after it; the medians of the three are reported, all three printed.
  const rounds = [];
  let ceiling;
  for (let round = 1; round <= ROUNDS; round++) {
    const service = await ctx.startServiceVariant(`import-${round}`, IMPORT_ENV);
    const token = await service.login();
    const projectId = await newProject(service, token, `MAIN${round}`);
    ctx.log(`round ${round}: importing it (its tests are new to the project)…`);
    const first = await importFile(service, token, projectId, file);
    const trpFirst = await parseWithTrp(file);
    ctx.log(`round ${round}: importing it again (a rerun: the tests are known)…`);
    const rerun = await importFile(service, token, projectId, file);
    const trpRerun = await parseWithTrp(file);
    if (round === ROUNDS) {
      ctx.log('the ceiling: PostgreSQL alone storing the first import’s rows, against the parse…');
      ceiling = await measureCeiling(service, projectId, () => parseWithTrp(file));
    }
    await service.stop();
    for (const [what, total] of [
      ['the first import', first.counts.total],
      ['the rerun', rerun.counts.total],
      ['test-results-parser', trpFirst.total],
      ['test-results-parser', trpRerun.total],
    ]) {
      if (total !== cases) {
        throw new Error(`expected ${cases} cases: ${what} read ${total}`);
      }
    }
    const r = {
      first,
      rerun,
      trpFirst,
      trpRerun,
      firstRatio: trpFirst.seconds / first.seconds,
      ratio: trpRerun.seconds / rerun.seconds,
    };
    ctx.log(
      `round ${round}: new tests ${first.seconds.toFixed(2)} s / parse ${trpFirst.seconds.toFixed(2)} s → ` +
        `${r.firstRatio.toFixed(2)}×, peak RSS ${first.peakRssMb.toFixed(0)} MB (parser ${trpFirst.peakRssMb.toFixed(0)}); ` +
        `rerun ${rerun.seconds.toFixed(2)} s / parse ${trpRerun.seconds.toFixed(2)} s → ${r.ratio.toFixed(2)}×, ` +
        `peak RSS ${rerun.peakRssMb.toFixed(0)} MB (parser ${trpRerun.peakRssMb.toFixed(0)})`,
    );
    rounds.push(r);
  }
  const ratios = rounds.map((r) => r.ratio);
  const firstRatios = rounds.map((r) => r.firstRatio);
  const ratio = median(ratios);
  const firstRatio = median(firstRatios);
  // Memory: each import's peak against the parse's measured right after it, the median of those ratios.
  const firstRss = median(rounds.map((r) => r.first.peakRssMb / r.trpFirst.peakRssMb));
  const rerunRss = median(rounds.map((r) => r.rerun.peakRssMb / r.trpRerun.peakRssMb));
  const mid = [...rounds].sort((x, y) => x.firstRatio - y.firstRatio)[Math.floor((ROUNDS - 1) / 2)];
  const { first, rerun } = mid;
  const trp = mid.trpFirst;
  const trpRate = cases / trp.seconds;
  const all = (list) => list.map((x) => x.toFixed(2)).join(', ');

  const bigRuns = [];
  if (ctx.options.importBigMb > 0) {
    const bigCases = Math.round((cases * ctx.options.importBigMb) / mb);
    const bigFile = join(dir, 'TEST-big.xml');
    ctx.log(`writing a JUnit report of ${bigCases} cases (~${ctx.options.importBigMb} MB)…`);
    await writeJunit(bigFile, bigCases);
    const bigMb = statSync(bigFile).size / 1e6;
    for (const [label, nodeArgs] of [
      [`as shipped (${SERVICE_NODE_FLAGS.join(' ')})`, SERVICE_NODE_FLAGS],
      ['without flags: Node 24 sizes the young generation from the machine', []],
    ]) {
      const variant = await ctx.startServiceVariant(`import-big-${bigRuns.length}`, IMPORT_ENV, nodeArgs);
      const bigToken = await variant.login();
      ctx.log(`importing ${bigMb.toFixed(0)} MB (${label})…`);
      const result = await importFile(variant, bigToken, await newProject(variant, bigToken, 'BIG'), bigFile);
      if (result.counts.total !== bigCases) {
        throw new Error(`the large import stored ${result.counts.total} of ${bigCases} cases`);
      }
      bigRuns.push({
        label,
        shipped: nodeArgs === SERVICE_NODE_FLAGS,
        mb: bigMb,
        cases: bigCases,
        ...result,
      });
      await variant.stop();
    }
    rmSync(bigFile, { force: true });
  }

  const summary = [
    {
      metric: `import rerun: ours (parse + store) / test-results-parser (parse only), cases/s (median of ${all(ratios)})`,
      value: ratio,
      unit: '×',
      digits: 2,
      target: '≥ 1.0',
      ok: ratio >= 1,
    },
    {
      metric: `import, tests new to the project: ours / test-results-parser, cases/s (median of ${all(firstRatios)})`,
      value: firstRatio,
      unit: '×',
      digits: 2,
      target: '≥ 1.0',
      ok: firstRatio >= 1,
    },
    {
      metric: `import, tests new: peak RSS ours (whole service) / test-results-parser (${mb.toFixed(0)} MB file)`,
      value: firstRss,
      unit: '×',
      digits: 2,
      target: '< 1.0',
      ok: firstRss < 1,
    },
    {
      metric: `import rerun: peak RSS ours (whole service) / test-results-parser (${mb.toFixed(0)} MB file)`,
      value: rerunRss,
      unit: '×',
      digits: 2,
      target: '< 1.0',
      ok: rerunRss < 1,
    },
  ];
  summary.push(
    {
      metric:
        'ceiling: PostgreSQL alone storing the first import’s rows (one transaction, COPY of its test cases, ' +
        `health and results, ${CEILING_BATCH} a batch) / test-results-parser (info; median of ${all(ceiling.first.ratios)})`,
      value: ceiling.first.ratio,
      unit: '×',
      digits: 2,
    },
    {
      metric:
        'ceiling: the same without the health rows (test cases and results only) / test-results-parser ' +
        `(info; median of ${all(ceiling.bare.ratios)})`,
      value: ceiling.bare.ratio,
      unit: '×',
      digits: 2,
    },
    {
      metric:
        'ceiling: PostgreSQL alone storing the re-import’s results only (no health update), same way / ' +
        `test-results-parser (info; median of ${all(ceiling.rerun.ratios)})`,
      value: ceiling.rerun.ratio,
      unit: '×',
      digits: 2,
    },
  );
  for (const big of bigRuns) {
    summary.push({
      metric: `import: service peak RSS importing ${big.mb.toFixed(0)} MB (${big.label})`,
      value: big.peakRssMb,
      unit: 'MB',
      digits: 0,
      ...(big.shipped ? { target: `< ${RSS_LIMIT_MB}`, ok: big.peakRssMb < RSS_LIMIT_MB } : {}),
    });
  }
  const rows = [
    [
      'ours: tests new to the project',
      cases,
      fmt(first.seconds, 2),
      fmt(cases / first.seconds, 0),
      fmt(first.peakRssMb, 0),
    ],
    [
      'ours: rerun, tests known',
      cases,
      fmt(rerun.seconds, 2),
      fmt(cases / rerun.seconds, 0),
      fmt(rerun.peakRssMb, 0),
    ],
    ['test-results-parser: parse only', cases, fmt(trp.seconds, 2), fmt(trpRate, 0), fmt(trp.peakRssMb, 0)],
    ...rounds.flatMap((r, i) => [
      [
        `round ${i + 1}: new tests, then its parse`,
        cases,
        `${fmt(r.first.seconds, 2)} / ${fmt(r.trpFirst.seconds, 2)}`,
        `${fmt(r.firstRatio, 2)}×`,
        `${fmt(r.first.peakRssMb, 0)} / ${fmt(r.trpFirst.peakRssMb, 0)}`,
      ],
      [
        `round ${i + 1}: rerun, then its parse`,
        cases,
        `${fmt(r.rerun.seconds, 2)} / ${fmt(r.trpRerun.seconds, 2)}`,
        `${fmt(r.ratio, 2)}×`,
        `${fmt(r.rerun.peakRssMb, 0)} / ${fmt(r.trpRerun.peakRssMb, 0)}`,
      ],
    ]),
    ...bigRuns.map((big) => [
      `ours: ${big.mb.toFixed(0)} MB, ${big.label}`,
      big.cases,
      fmt(big.seconds, 2),
      fmt(big.cases / big.seconds, 0),
      fmt(big.peakRssMb, 0),
    ]),
  ];
  return {
    summary,
    tables: [
      {
        title: `JUnit over HTTP, ${mb.toFixed(1)} MB, ${cases} cases`,
        headers: ['', 'cases', 's', 'cases/s', 'peak RSS MB'],
        rows,
      },
    ],
    data: { cases, mb, rounds, ratio, firstRatio, firstRss, rerunRss, bigRuns, ceiling },
  };
}

const CEILING_BATCH = 1000;

/**
 * The ceilings of an import (issue #41): PostgreSQL alone storing exactly the rows the service stored, read back
 * with COPY TO, with the least work there is: in one transaction on one connection, as an import is, COPY of each
 * table's next CEILING_BATCH rows in turn (ids given, nothing looked up, no ON CONFLICT), into copies of the tables
 * with every index the service keeps.
 * - first: the first import's test cases, their health and its results, into empty tables;
 * - bare: the same without the health rows (what no design that keeps a test case and a result a case avoids);
 * - rerun: the re-import's results alone, into a table already holding the first import's (unmeasured); a
 *   re-import must also bring its tests' health up to date, so this bounds it from above by a wide margin.
 * No import can store its rows faster. Each is measured ROUNDS times, each followed by `parse()`; the median of
 * their ratios to it bounds the import's ratio.
 */
async function measureCeiling(service, projectId, parse) {
  const client = new pg.Client({ connectionString: service.db.url });
  await client.connect();
  const RESULTS =
    'id, run_id, project_id, test_id, uuid, name, suite, status, duration_ms, message, trace, started_at, ' +
    'attributes, retry, created_at, outcome, attempts, other_statuses';
  const tables = [
    ['test_cases', 'id, project_id, identity, external_id, suite, name, flaky, created_at'],
    [
      'test_health',
      'test_id, project_id, win, runs, flake_rate, flaky, last_status, last_run_id, first_seen_at, ' +
        'last_failed_at, state, q_passes',
    ],
    ['results', RESULTS],
  ];
  const dump = async (table, columns, where) => {
    const lines = (
      await copyOut(client, `COPY (SELECT ${columns} FROM ${table} WHERE ${where} ORDER BY 1) TO STDOUT`)
    )
      .split('\n')
      .filter(Boolean);
    const batches = [];
    for (let i = 0; i < lines.length; i += CEILING_BATCH) {
      batches.push(Buffer.from(`${lines.slice(i, i + CEILING_BATCH).join('\n')}\n`));
    }
    return { copy: `COPY ceiling_${table} (${columns}) FROM STDIN`, batches };
  };
  // One transaction: each dump's next batch in turn.
  const store = async (dumps) => {
    await client.query('BEGIN');
    const count = Math.max(...dumps.map((d) => d.batches.length));
    for (let b = 0; b < count; b++) {
      for (const { copy, batches } of dumps) {
        if (b < batches.length) {
          await pipeline(Readable.from([batches[b]]), client.query(copyFrom(copy)));
        }
      }
    }
    await client.query('COMMIT');
  };
  try {
    const project = Number(projectId);
    const { rows } = await client.query('SELECT id FROM runs WHERE project_id = $1 ORDER BY id LIMIT 2', [
      project,
    ]);
    const [firstRun, secondRun] = rows.map((r) => Number(r.id));
    const first = [];
    for (const [table, columns] of tables) {
      first.push(
        await dump(table, columns, table === 'results' ? `run_id = ${firstRun}` : `project_id = ${project}`),
      );
      await client.query(`DROP TABLE IF EXISTS ceiling_${table}`);
      await client.query(`CREATE TABLE ceiling_${table} (LIKE ${table} INCLUDING ALL)`);
    }
    const rerun = [await dump('results', RESULTS, `run_id = ${secondRun}`)];
    const all = tables.map(([t]) => `ceiling_${t}`).join(', ');
    const stores = { first, bare: [first[0], first[2]], rerun };
    const measured = { first: [], bare: [], rerun: [] };
    for (let i = 0; i < ROUNDS; i++) {
      for (const kind of ['first', 'bare', 'rerun']) {
        await client.query(`TRUNCATE ${all}`);
        if (kind === 'rerun') {
          await store([first[2]]);
        }
        await client.query('CHECKPOINT').catch(() => {});
        const started = performance.now();
        await store(stores[kind]);
        const seconds = (performance.now() - started) / 1000;
        const trp = await parse();
        measured[kind].push({ seconds, parseSeconds: trp.seconds, ratio: trp.seconds / seconds });
      }
    }
    const summarizeKind = (runs) => ({
      runs,
      ratios: runs.map((r) => r.ratio),
      ratio: median(runs.map((r) => r.ratio)),
    });
    return {
      first: summarizeKind(measured.first),
      bare: summarizeKind(measured.bare),
      rerun: summarizeKind(measured.rerun),
    };
  } finally {
    for (const [table] of tables) {
      await client.query(`DROP TABLE IF EXISTS ceiling_${table}`).catch(() => {});
    }
    await client.end();
  }
}

/** The text of a COPY … TO STDOUT. */
async function copyOut(client, sql) {
  const parts = [];
  await pipeline(
    client.query(copyTo(sql)),
    new Writable({
      write(chunk, _encoding, done) {
        parts.push(chunk);
        done();
      },
    }),
  );
  return Buffer.concat(parts).toString();
}
