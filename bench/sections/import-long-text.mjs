// Long text in an import (issue #34, item 8): four gzipped JUnit files of ~250 KB uploaded at once, each holding
// one 250 MB `message` attribute, against the built service; its peak resident memory and CPU, and the batch's
// time, beside the same four uploads of a normal-size report (the reference). Each batch runs on a service of
// its own, so that its peak is that batch's. Then the same four long files on a service with the default
// SVC_IMPORT_MAX_CONCURRENT_PER_USER (2): two are imported, two refused with 429.
import { once } from 'node:events';
import { createWriteStream, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { Readable } from 'node:stream';
import { createGzip, constants } from 'node:zlib';
import { processCpuSeconds } from '../lib/cpu.mjs';
import { onCleanup } from '../lib/processes.mjs';
import { fmt } from '../lib/report.mjs';

export const name = 'import.long_text';
export const title =
  'Import: four parallel gzipped JUnit uploads, each with one 250 MB attribute, against a normal report';

const PARALLEL = 4;
const LONG_MB = 250;
/** What the README says an import peaks at (a 500 MB report); four long-text uploads must stay under it. */
const RSS_LIMIT_MB = 300;

/** `chunks` (strings or buffers) gzipped into `path`, at the highest compression: the file is what is uploaded. */
async function writeGzip(path, chunks) {
  await pipeline(
    Readable.from(chunks),
    createGzip({ level: constants.Z_BEST_COMPRESSION }),
    createWriteStream(path),
  );
}

/** One test case whose failure message is `mb` MB of text, never held whole here either. */
function* longReport(mb) {
  yield '<?xml version="1.0" encoding="UTF-8"?>\n<testsuites name="bench">\n';
  yield '  <testsuite name="bench.LongText" tests="2">\n';
  yield '    <testcase classname="bench.LongText" name="short" time="0.001"/>\n';
  yield '    <testcase classname="bench.LongText" name="huge message" time="0.002"><failure message="';
  // One repeated character, as the report that found the issue had: deflate's best ratio (~1,000:1).
  const block = Buffer.alloc(1_048_576, 'x');
  for (let i = 0; i < mb; i++) {
    yield block;
  }
  yield '" type="java.lang.AssertionError">at bench.LongText.hugeMessage(LongText.java:42)</failure></testcase>\n';
  yield '  </testsuite>\n</testsuites>\n';
}

/** A report of `cases` ordinary test cases, 10% failing with a short trace (about 0.5 KB a case). */
function* normalReport(cases) {
  yield '<?xml version="1.0" encoding="UTF-8"?>\n<testsuites name="bench">\n  <testsuite name="bench.Normal">\n';
  for (let i = 0; i < cases; i++) {
    const head = `    <testcase classname="bench.Normal${i % 20}" name="case_${i}" time="0.0${i % 90}"`;
    yield i % 10 === 3
      ? `${head}><failure message="expected 200 but was 500 (${i})" type="AssertionError">AssertionError: expected 200\n${'\tat bench.Service.handle(Service.java:42)\n'.repeat(8)}</failure></testcase>\n`
      : `${head}/>\n`;
  }
  yield '  </testsuite>\n</testsuites>\n';
}

function rssMb(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/^VmRSS:\s+(\d+)/m.exec(status)?.[1] ?? 0) / 1024;
}

/** POSTs `path` as application/gzip; status and body. */
function upload(service, token, projectId, path) {
  return new Promise((resolve, reject) => {
    const req = request(
      `${service.url}/api/import/junit?projectId=${projectId}`,
      {
        method: 'POST',
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/gzip',
          'content-length': String(statSync(path).size),
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode, body: JSON.parse(text) }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(readFileSync(path));
  });
}

/**
 * `PARALLEL` uploads of `path` at once on a service of its own: the batch's wall time, the service's CPU seconds
 * during it, its RSS before, at its peak (sampled every 25 ms) and after, and the answers.
 */
async function batch(ctx, label, env, path) {
  const service = await ctx.startServiceVariant(`long-text-${label}`, {
    SVC_HTTP_REQUEST_TIMEOUT: '900s',
    ...env,
  });
  const token = await service.login();
  const project = await fetch(`${service.url}/api/projects`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      key: `LONG_${label.toUpperCase().replace(/\W/g, '_')}`,
      name: `long text ${label}`,
    }),
  }).then((r) => r.json());
  // Settle after boot and login, so that "before" is the idle service.
  await new Promise((r) => setTimeout(r, 1000));
  const beforeMb = rssMb(service.pid);
  let peakMb = beforeMb;
  const sampler = setInterval(() => {
    peakMb = Math.max(peakMb, rssMb(service.pid));
  }, 25);
  const cpu0 = processCpuSeconds(service.pid);
  const started = performance.now();
  const answers = await Promise.all(
    Array.from({ length: PARALLEL }, () => upload(service, token, project.id, path)),
  );
  const seconds = (performance.now() - started) / 1000;
  const cpuSeconds = processCpuSeconds(service.pid) - cpu0;
  clearInterval(sampler);
  peakMb = Math.max(peakMb, rssMb(service.pid));
  await new Promise((r) => setTimeout(r, 2000));
  const afterMb = rssMb(service.pid);
  await service.stop();
  return { label, seconds, cpuSeconds, beforeMb, peakMb, afterMb, answers };
}

export async function run(ctx) {
  const dir = mkdtempSync(join(tmpdir(), 'tms-bench-long-text-'));
  onCleanup(() => rmSync(dir, { recursive: true, force: true }));
  const longFile = join(dir, 'TEST-long.xml.gz');
  const normalFile = join(dir, 'TEST-normal.xml.gz');
  ctx.log(`writing a gzipped JUnit report with one ${LONG_MB} MB attribute…`);
  await writeGzip(longFile, longReport(LONG_MB));
  await writeGzip(normalFile, normalReport(2000));
  const longKb = statSync(longFile).size / 1024;
  const normalKb = statSync(normalFile).size / 1024;
  let normalMb = 0;
  for (const chunk of normalReport(2000)) {
    normalMb += Buffer.byteLength(chunk) / 1_048_576;
  }
  ctx.log(
    `${longKb.toFixed(0)} KB (${LONG_MB} MB unpacked) and a normal report of ${normalKb.toFixed(0)} KB`,
  );

  const raised = { SVC_IMPORT_MAX_CONCURRENT_PER_USER: String(PARALLEL) };
  ctx.log(`${PARALLEL} normal reports at once (reference)…`);
  const normal = await batch(ctx, 'normal', raised, normalFile);
  ctx.log(`${PARALLEL} long-text reports at once…`);
  const long = await batch(ctx, 'long', raised, longFile);
  ctx.log(`${PARALLEL} long-text reports at once, SVC_IMPORT_MAX_CONCURRENT_PER_USER at its default (2)…`);
  const limited = await batch(ctx, 'limited', {}, longFile);

  for (const b of [normal, long]) {
    const bad = b.answers.find((a) => a.status !== 201);
    if (bad) {
      throw new Error(
        `${b.label}: an upload answered ${bad.status}: ${JSON.stringify(bad.body).slice(0, 300)}`,
      );
    }
  }
  const message = long.answers[0].body.warnings.find((w) => w.includes('its message was cut'));
  if (!message) {
    throw new Error(`the long message was not cut: ${JSON.stringify(long.answers[0].body.warnings)}`);
  }
  const statuses = limited.answers.map((a) => a.status).sort();
  const accepted = statuses.filter((s) => s === 201).length;
  const refused = statuses.filter((s) => s === 429).length;

  const row = (b, what) => [
    what,
    fmt(b.seconds, 2),
    fmt(b.cpuSeconds, 2),
    fmt(b.beforeMb, 0),
    fmt(b.peakMb, 0),
    fmt(b.afterMb, 0),
    b.answers.map((a) => a.status).join(' '),
  ];
  return {
    summary: [
      {
        metric: `import.long_text: service peak RSS, ${PARALLEL} × ${LONG_MB} MB attribute (gzip ${longKb.toFixed(0)} KB) at once`,
        value: long.peakMb,
        unit: 'MB',
        digits: 0,
        target: `< ${RSS_LIMIT_MB}`,
        ok: long.peakMb < RSS_LIMIT_MB,
      },
      {
        metric: `import.long_text: service peak RSS, ${PARALLEL} × normal report (gzip ${normalKb.toFixed(0)} KB) at once`,
        value: normal.peakMb,
        unit: 'MB',
        digits: 0,
      },
      {
        metric: `import.long_text: time of the ${PARALLEL} long-text uploads`,
        value: long.seconds,
        unit: 's',
        digits: 2,
      },
      {
        metric: `import.long_text: of ${PARALLEL} at once with the default limit of 2 per user, refused with 429`,
        value: refused,
        unit: '',
        digits: 0,
        target: '2 (and 2 imported)',
        ok: accepted === 2 && refused === 2,
      },
    ],
    tables: [
      {
        title: `${PARALLEL} uploads at once, each on a fresh service (RSS of the service process)`,
        headers: ['', 'wall s', 'service CPU s', 'RSS before MB', 'peak RSS MB', 'RSS after MB', 'answers'],
        rows: [
          row(
            normal,
            `normal report, 2,000 cases (${normalMb.toFixed(1)} MB, ${normalKb.toFixed(0)} KB gzip)`,
          ),
          row(long, `one ${LONG_MB} MB attribute (${longKb.toFixed(0)} KB gzip)`),
          row(limited, `the same, default limit of 2 per user`),
        ],
      },
    ],
    data: {
      parallel: PARALLEL,
      longMb: LONG_MB,
      longKb,
      normalKb,
      normalMb,
      normal,
      long,
      limited: { ...limited, answers: limited.answers.map((a) => a.status) },
      cutWarning: message,
    },
  };
}
