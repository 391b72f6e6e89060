// npm run bench — performance figures of the service, measured against real PostgreSQL and Redis.
// Runs the sections listed in sections/index.mjs, prints a table per section and a summary, and writes
// bench/results/latest.json. Every process it starts is stopped on the way out (also on errors and Ctrl-C).
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { BenchContext } from './lib/context.mjs';
import { parseOptions, USAGE } from './lib/options.mjs';
import { installExitHandlers, runCleanups } from './lib/processes.mjs';
import { fmt, formatTable } from './lib/report.mjs';
import { ROOT } from './lib/services.mjs';
import { sections } from './sections/index.mjs';

async function main() {
  let options;
  try {
    options = parseOptions(process.argv.slice(2));
  } catch (error) {
    console.error(`${error.message}\n\n${USAGE}`);
    return 2;
  }
  if (options.help) {
    console.log(`${USAGE}\nSections: ${sections.map((s) => s.name).join(', ')}`);
    return 0;
  }
  const unknown = [...(options.only ?? []), ...options.skip].filter(
    (n) => !sections.some((s) => s.name === n),
  );
  if (unknown.length) {
    console.error(
      `Unknown section(s): ${unknown.join(', ')}. Sections: ${sections.map((s) => s.name).join(', ')}`,
    );
    return 2;
  }
  const selected = sections.filter(
    (s) => (options.only ? options.only.includes(s.name) : true) && !options.skip.includes(s.name),
  );

  installExitHandlers();
  const resultsDir = join(ROOT, 'bench', 'results');
  mkdirSync(resultsDir, { recursive: true });
  const ctx = new BenchContext(options, { logDir: resultsDir });
  const startedAt = new Date();
  const loadAtStart = loadavg();
  const t0 = performance.now();
  console.log(
    `bench: ${selected.map((s) => s.name).join(', ')} — load generator ${ctx.tool.tool} ${ctx.tool.version}, ` +
      `${options.connections} connections, ${options.durationSec} s × ${options.rounds} rounds (+${options.warmupSec} s warm-up); ` +
      `node ${process.version}, ${cpus().length} cpus, load average ${loadAtStart.map((l) => l.toFixed(2)).join(' ')}`,
  );

  const results = {};
  const summary = [];
  let failed = false;
  try {
    for (const section of selected) {
      console.log(`\n== ${section.title} [${section.name}]`);
      const s0 = performance.now();
      try {
        const outcome = await section.run(ctx);
        const seconds = (performance.now() - s0) / 1000;
        for (const table of outcome.tables ?? []) {
          console.log(`\n${table.title ? `${table.title}\n` : ''}${formatTable(table.headers, table.rows)}`);
        }
        results[section.name] = { title: section.title, seconds, summary: outcome.summary, ...outcome.data };
        for (const line of outcome.summary) {
          summary.push({ section: section.name, ...line });
        }
      } catch (error) {
        failed = true;
        console.error(`\nbench: section ${section.name} failed: ${error.stack ?? error}`);
        results[section.name] = { title: section.title, error: String(error.message ?? error) };
        summary.push({
          section: section.name,
          metric: 'FAILED',
          value: null,
          unit: '',
          target: undefined,
          ok: false,
          error: true,
        });
      }
    }
  } finally {
    await runCleanups();
  }

  const seconds = (performance.now() - t0) / 1000;
  console.log(
    `\n== Summary (${seconds.toFixed(0)} s; ${ctx.tool.tool} ${ctx.tool.version}, ${options.connections} connections)\n`,
  );
  console.log(
    formatTable(
      ['section', 'metric', 'value', 'unit', 'target', 'status'],
      summary.map((l) => [
        l.section,
        l.metric,
        fmt(l.value, l.digits ?? (l.unit === 'req/s' ? 0 : 2)),
        l.unit,
        l.target ?? '',
        l.error ? 'FAILED' : l.target === undefined ? '' : l.ok ? 'ok' : 'MISS',
      ]),
    ),
  );

  const out = options.out ?? join(resultsDir, 'latest.json');
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(
    out,
    `${JSON.stringify(
      {
        startedAt: startedAt.toISOString(),
        seconds,
        machine: {
          cpus: cpus().length,
          cpuModel: cpus()[0]?.model,
          loadavgAtStart: loadAtStart,
          loadavgAtEnd: loadavg(),
          node: process.version,
        },
        loadGenerator: ctx.tool,
        options: { ...options, pgAdminUrl: undefined, help: undefined },
        sections: results,
        summary,
      },
      null,
      2,
    )}\n`,
  );
  const shown = relative(process.cwd(), out);
  console.log(`\nResults written to ${shown && !shown.startsWith('..') ? shown : out}`);

  const missed = summary.some((l) => l.target !== undefined && !l.ok && !l.error);
  if (failed) {
    return 1;
  }
  return options.strict && missed ? 1 : 0;
}

process.exitCode = await main();
