// Failure triage (API.md, "Failure triage across runs"; src/triage/):
//   1. ingest.v1_rerun with signatures: V1 reruns of 20,000 tests, 20% of them failing with messages and stack
//      traces of 50 kinds (numbers, ids and line numbers differing every time), stored by the service as shipped
//      and by a second instance with SVC_TRIAGE_SIGNATURES=false (the bench's switch: no signatures in the write
//      path), measured in turns in one run; the ratio of their results/s.
//   2. GET /api/projects/{id}/failures?q=<word> and GET /api/failures/{id}/similar over a project of 10,000
//      signatures from 2,000,000 results (seeded with SQL), one request at a time: p50 and p90.
import http from 'node:http';
import pg from 'pg';
import { fmt, thousands } from '../lib/report.mjs';
import { median, summarize } from '../lib/stats.mjs';

export const name = 'triage';
export const title =
  'Failure triage: signatures in the V1 write path, search and similar over 10,000 signatures';

const BATCH = 1000;
const TESTS = 20_000;
const CLIENTS = 2;
// Rounds are short (20,000 results, under a second each): nine pairs, so that a few noisy ones do not decide it.
const ROUNDS = 9;
const TARGET_RATIO = 0.85;
const SIGNATURES = 10_000;
const SEED_RUNS = 200;
const SEED_TESTS = 10_000; // a run: every test once, so SEED_RUNS × SEED_TESTS results
const SAMPLES = 40;
const WARMUP = 5;
const TARGET_MS = 100;

// ---------------------------------------------------------------------------------------------------------
// 1. The write path

const KINDS = 50;
/** A failing result of kind `k`, as the n-th failure sends it: numbers, ids, paths and line numbers vary. */
function failure(k, n) {
  const line = 10 + ((n * 7) % 90);
  return {
    message: `AssertionError [kind ${k}]: expected order ${n} to have status 200 but was 500 after ${n % 997} ms (request 0x${(n * 2654435761).toString(16)})`,
    trace: [
      `AssertionError [kind ${k}]: expected status 200 but was 500`,
      `    at Context.expectStatus (/ci/build-${n % 13}/node_modules/chai/lib/chai/assertion.js:${line}:13)`,
      `    at OrderSpec.kind${k} (/ci/build-${n % 13}/test/orders/order-${k}.spec.js:${line}:9)`,
      `    at process.processTicksAndRejections (node:internal/process/task_queues:95:5)`,
    ].join('\n'),
  };
}

function bodies(round) {
  const out = [];
  for (let b = 0; b < TESTS / BATCH; b++) {
    const results = [];
    for (let i = b * BATCH; i < (b + 1) * BATCH; i++) {
      const failed = i % 5 === 2; // 20%
      const r = {
        name: `should handle order case ${i}`,
        suite: `com.example.orders.Suite${Math.floor(i / 50)}`,
        status: failed ? 'FAILED' : 'PASSED',
        durationMs: (i * 7919) % 2000,
      };
      if (failed) {
        Object.assign(r, failure(i % KINDS, i * 31 + round));
      }
      results.push(r);
    }
    out.push(Buffer.from(JSON.stringify({ results })));
  }
  return out;
}

function request(service, token, method, path, body) {
  return new Promise((resolve, reject) => {
    const url = new URL(path, service.url);
    const req = http.request(
      url,
      {
        method,
        agent: service.agent,
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          ...(body ? { 'content-length': body.length } : {}),
        },
      },
      (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString();
          if (res.statusCode >= 300) {
            reject(new Error(`${method} ${path} answered ${res.statusCode}: ${text.slice(0, 300)}`));
          } else {
            resolve(text ? JSON.parse(text) : undefined);
          }
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** Sends every body to a new run of the project, CLIENTS at a time; results/s. */
async function rerun(service, token, projectId, payloads, label) {
  const run = await request(
    service,
    token,
    'POST',
    `/api/projects/${projectId}/runs`,
    Buffer.from(JSON.stringify({ name: label })),
  );
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      while (next < payloads.length) {
        const body = payloads[next++];
        await request(service, token, 'POST', `/api/runs/${run.id}/results`, body);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  return (payloads.length * BATCH) / seconds;
}

async function measureWritePath(ctx) {
  const withSignatures = await ctx.service();
  const without = await ctx.startServiceVariant('nosig', { SVC_TRIAGE_SIGNATURES: 'false' });
  const services = [
    { label: 'with signatures', service: withSignatures, rates: [] },
    { label: 'without signatures', service: without, rates: [] },
  ];
  for (const s of services) {
    s.service.agent = new http.Agent({ keepAlive: true, maxSockets: CLIENTS });
    s.token = await s.service.login();
    s.project = await request(
      s.service,
      s.token,
      'POST',
      '/api/projects',
      Buffer.from(JSON.stringify({ key: `TRI${Date.now() % 100000}`, name: 'Triage bench' })),
    );
    ctx.log(`${s.label}: a previous run of the ${thousands(TESTS)} tests (not measured)…`);
    await rerun(s.service, s.token, s.project.id, bodies(0), 'previous');
  }
  for (let round = 1; round <= ROUNDS; round++) {
    const payloads = bodies(round);
    // In turns, the order changing each round: the machine's load drifts.
    const order = round % 2 ? services : [...services].reverse();
    for (const s of order) {
      const rate = await rerun(s.service, s.token, s.project.id, payloads, `round ${round}`);
      s.rates.push(rate);
      ctx.log(`round ${round}, ${s.label}: ${thousands(Math.round(rate))} results/s`);
    }
  }
  const [on, off] = services.map((s) => median(s.rates));
  // Each round's pair ran back to back: the median of their ratios is steadier than the ratio of the medians on a
  // machine whose load drifts from one round to the next.
  const pairRatio = median(services[0].rates.map((rate, i) => rate / services[1].rates[i]));
  // What the signatures hold after it all: every failing result has one, of the 50 kinds.
  const db = new pg.Client({ connectionString: withSignatures.db.url });
  await db.connect();
  let stored;
  try {
    ({
      rows: [stored],
    } = await db.query(
      `SELECT count(*)::int AS signatures, sum(occurrences)::int AS occurrences FROM failure_signatures WHERE project_id = $1`,
      [services[0].project.id],
    ));
  } finally {
    await db.end();
  }
  return {
    on,
    off,
    ratio: pairRatio,
    ratioOfMedians: on / off,
    rates: services.map((s) => ({ label: s.label, rates: s.rates })),
    stored,
  };
}

// ---------------------------------------------------------------------------------------------------------
// 2. Search and similar

const EXCEPTIONS = [
  'java.lang.AssertionError',
  'org.opentest4j.AssertionFailedError',
  'java.lang.NullPointerException',
  'java.util.concurrent.TimeoutException',
  'java.net.ConnectException',
  'AssertionError',
  'TypeError',
  'Error',
  'System.InvalidOperationException',
  'System.TimeoutException',
  'panic',
  'ValueError',
  'KeyError',
];
const PHRASES = [
  'expected status <n> but was <n>',
  'Connection refused: <n>.<n>.<n>.<n>:<n>',
  'Timed out after <n> ms waiting for element #checkout-button',
  'Cannot read properties of undefined (reading "total")',
  'expected [<n>] but found [<n>]',
  'Object reference not set to an instance of an object',
  'index out of range [<n>] with length <n>',
  'Deadlock detected while saving order <id>',
  'Invalid token: signature verification failed',
  'relation "orders_archive" does not exist',
  'Element not interactable: <id>',
  'Expected: <n> But was: <n>',
  'Service Unavailable from payment gateway',
  'could not serialize access due to concurrent update',
  'JSON parse error at position <n>',
  'expected shipping address to be present',
  'assertion failed: left == right',
];
const MODULES = [
  'orders',
  'billing',
  'checkout',
  'inventory',
  'users',
  'search',
  'shipping',
  'reports',
  'auth',
  'catalog',
  'payments',
];

async function seed(ctx, service, projectId) {
  const db = new pg.Client({ connectionString: service.db.url });
  await db.connect();
  try {
    const started = performance.now();
    await db.query(
      `INSERT INTO test_cases (project_id, identity, suite, name)
         SELECT $1::bigint, md5('triage:' || g)::uuid, 'com.example.Suite' || (g % 200), 'triage test ' || g
           FROM generate_series(1, $2::int) g`,
      [projectId, SEED_TESTS],
    );
    // 10,000 keys of the service's shape: a stripped message, then its first own frame.
    await db.query(
      `INSERT INTO failure_signatures (project_id, key, sample_message, first_run_id, first_seen_at, last_run_id, last_seen_at)
         SELECT $1, k, replace(replace(k, '<n>', '42'), '<id>', '7f3a9c21'), 0, now(), 0, now() FROM (
           SELECT format('%s: %s @ com.acme.%s.%sService.handle%s(%sService.java)',
                         (ARRAY[${EXCEPTIONS.map((e) => `'${e}'`).join(',')}])[1 + g % ${EXCEPTIONS.length}],
                         (ARRAY[${PHRASES.map((p) => `'${p.replace(/'/g, "''")}'`).join(',')}])[1 + (g / ${EXCEPTIONS.length}) % ${PHRASES.length}],
                         m, initcap(m), g, initcap(m)) AS k
             FROM generate_series(1, $2::int) g,
                  LATERAL (SELECT (ARRAY[${MODULES.map((m) => `'${m}'`).join(',')}])[1 + g % ${MODULES.length}] AS m) mm) s`,
      [projectId, SIGNATURES],
    );
    const {
      rows: [{ first }],
    } = await db.query('SELECT min(id) AS first FROM failure_signatures WHERE project_id = $1', [projectId]);
    ctx.log(`seeding ${thousands(SEED_RUNS * SEED_TESTS)} results in ${SEED_RUNS} runs, 20% failing (SQL)…`);
    for (let r = 0; r < SEED_RUNS; r++) {
      const {
        rows: [{ id: runId }],
      } = await db.query(
        `INSERT INTO runs (project_id, name, status, started_at, finished_at, count_total)
           VALUES ($1, $2, 'FINISHED', now() - make_interval(hours => $3), now(), $4) RETURNING id`,
        [projectId, `seed ${r}`, SEED_RUNS - r, SEED_TESTS],
      );
      await db.query(
        `INSERT INTO results (run_id, project_id, test_id, name, suite, status, message)
           SELECT $1, $2, t.id, t.name, t.suite,
                  CASE WHEN (t.id + $3) % 5 = 0 THEN 'FAILED' ELSE 'PASSED' END,
                  CASE WHEN (t.id + $3) % 5 = 0 THEN 'seeded failure' END
             FROM test_cases t WHERE t.project_id = $2`,
        [runId, projectId, r],
      );
      // Each failing result's signature: one of 10,000, by test and run.
      await db.query(
        `INSERT INTO failure_results (run_id, result_id, signature_id)
           SELECT $1, r.id, $2::bigint + (r.test_id * 7 + $3) % ${SIGNATURES}
             FROM results r WHERE r.run_id = $1 AND r.status = 'FAILED'`,
        [runId, first, r],
      );
    }
    ctx.log('counting the seeded signatures into their rows and link tables…');
    await db.query(
      `INSERT INTO failure_signature_runs (signature_id, run_id, started_at, occurrences)
         SELECT f.signature_id, f.run_id, r.started_at, count(*) FROM failure_results f JOIN runs r ON r.id = f.run_id
          WHERE r.project_id = $1 GROUP BY 1, 2, 3`,
      [projectId],
    );
    await db.query(
      `INSERT INTO failure_signature_tests (signature_id, test_id, occurrences)
         SELECT f.signature_id, r.test_id, count(*) FROM failure_results f
           JOIN results r ON r.run_id = f.run_id AND r.id = f.result_id AND r.status = 'FAILED'
           JOIN runs ru ON ru.id = f.run_id
          WHERE ru.project_id = $1 GROUP BY 1, 2`,
      [projectId],
    );
    await db.query(
      `UPDATE failure_signatures s SET occurrences = c.occurrences, runs = c.runs, first_run_id = c.first_run,
              last_run_id = c.last_run, first_seen_at = c.first_at, last_seen_at = c.last_at,
              tests = (SELECT count(*) FROM failure_signature_tests t WHERE t.signature_id = s.id)
         FROM (SELECT l.signature_id, sum(l.occurrences) AS occurrences, count(*) AS runs,
                      (array_agg(r.id ORDER BY r.started_at))[1] AS first_run, min(r.started_at) AS first_at,
                      (array_agg(r.id ORDER BY r.started_at DESC))[1] AS last_run, max(r.started_at) AS last_at
                 FROM failure_signature_runs l JOIN runs r ON r.id = l.run_id GROUP BY 1) c
        WHERE s.id = c.signature_id`,
    );
    for (const table of [
      'results',
      'failure_results',
      'failure_signatures',
      'failure_signature_runs',
      'failure_signature_tests',
      'test_cases',
      'runs',
    ]) {
      await db.query(`VACUUM ANALYZE ${table}`);
    }
    const {
      rows: [counts],
    } = await db.query(
      `SELECT (SELECT count(*) FROM results WHERE project_id = $1)::int AS results,
              (SELECT count(*) FROM failure_signatures WHERE project_id = $1)::int AS signatures,
              (SELECT sum(occurrences) FROM failure_signatures WHERE project_id = $1)::int AS occurrences`,
      [projectId],
    );
    const ids = (
      await db.query('SELECT id FROM failure_signatures WHERE project_id = $1 ORDER BY random() LIMIT $2', [
        projectId,
        SAMPLES + WARMUP,
      ])
    ).rows.map((r) => r.id);
    const explain = async (sql, params) =>
      (await db.query(`EXPLAIN ${sql}`, params)).rows.map((r) => r['QUERY PLAN']).join('\n');
    return { counts, ids, seconds: (performance.now() - started) / 1000, explain };
  } finally {
    await db.end();
  }
}

async function timed(calls) {
  for (let i = 0; i < WARMUP; i++) {
    await calls(i);
  }
  const samples = [];
  for (let i = 0; i < SAMPLES; i++) {
    const started = performance.now();
    await calls(WARMUP + i);
    samples.push(performance.now() - started);
  }
  return summarize(samples);
}

async function measureReads(ctx) {
  const service = await ctx.service();
  service.agent ??= new http.Agent({ keepAlive: true, maxSockets: CLIENTS });
  const token = await service.login();
  const project = await request(
    service,
    token,
    'POST',
    '/api/projects',
    Buffer.from(JSON.stringify({ key: `TRS${Date.now() % 100000}`, name: 'Triage search bench' })),
  );
  ctx.log(`seeding ${thousands(SIGNATURES)} signatures…`);
  const seeded = await seed(ctx, service, project.id);
  ctx.log(`seeded in ${fmt(seeded.seconds, 0)} s: ${JSON.stringify(seeded.counts)}`);
  const words = ['checkout', 'gateway', 'Deadlock', 'inventory', 'serialize', 'refused'];
  let hits = 0;
  const search = await timed(async (i) => {
    const page = await request(
      service,
      token,
      'GET',
      `/api/projects/${project.id}/failures?q=${words[i % words.length]}`,
    );
    hits = Math.max(hits, page.totalElements);
  });
  const fragment = await timed(() =>
    request(
      service,
      token,
      'GET',
      `/api/projects/${project.id}/failures?q=${encodeURIComponent('ion refused: <n>')}`,
    ),
  );
  let similarCount = 0;
  const similar = await timed(async (i) => {
    const list = await request(service, token, 'GET', `/api/failures/${seeded.ids[i]}/similar`);
    similarCount = Math.max(similarCount, list.length);
  });
  return { seeded: seeded.counts, search, fragment, similar, hits, similarCount };
}

export async function run(ctx) {
  // BENCH_TRIAGE_PARTS=write or =reads measures one half (the seeding of 2,000,000 results takes minutes).
  const parts = process.env.BENCH_TRIAGE_PARTS ?? 'write,reads';
  const write = parts.includes('write') ? await measureWritePath(ctx) : undefined;
  const reads = parts.includes('reads') ? await measureReads(ctx) : undefined;
  const row = (label, s) => [label, s.count, fmt(s.p50, 1), fmt(s.p90, 1), fmt(s.max, 1)];
  return {
    tables: [
      write && {
        title: `V1 reruns of ${thousands(TESTS)} tests, 20% failing (${KINDS} kinds), ${CLIENTS} clients, ${ROUNDS} rounds in turns`,
        headers: ['instance', 'results/s by round', 'median'],
        rows: [
          ...write.rates.map((s) => [
            s.label,
            s.rates.map((r) => thousands(Math.round(r))).join(', '),
            thousands(Math.round(median(s.rates))),
          ]),
          [
            'with / without',
            write.rates[0].rates.map((r, i) => fmt(r / write.rates[1].rates[i], 2)).join(', '),
            fmt(write.ratio, 2),
          ],
        ],
      },
      reads && {
        title: `latency in ms over ${thousands(reads.seeded.signatures)} signatures from ${thousands(reads.seeded.results)} results`,
        headers: ['request', 'n', 'p50', 'p90', 'max'],
        rows: [
          row(`GET /failures?q=<word> (up to ${reads.hits} matches)`, reads.search),
          row('GET /failures?q=<fragment>', reads.fragment),
          row(`GET /failures/{id}/similar (up to ${reads.similarCount})`, reads.similar),
        ],
      },
    ].filter(Boolean),
    summary: [
      write && {
        metric:
          "ingest.v1_rerun, 20% failing: with signatures / without (results/s, median of the rounds' ratios)",
        value: write.ratio,
        unit: '×',
        digits: 2,
        target: `≥ ${TARGET_RATIO}`,
        ok: write.ratio >= TARGET_RATIO,
      },
      write && {
        metric: 'the same as the ratio of the two medians',
        value: write.ratioOfMedians,
        unit: '×',
        digits: 2,
      },
      write && { metric: 'ingest.v1_rerun with signatures', value: write.on, unit: 'results/s', digits: 0 },
      write && {
        metric: 'ingest.v1_rerun without signatures',
        value: write.off,
        unit: 'results/s',
        digits: 0,
      },
      reads && {
        metric: 'GET /failures?q=<word> p50 (10,000 signatures)',
        value: reads.search.p50,
        unit: 'ms',
        digits: 1,
        target: `< ${TARGET_MS}`,
        ok: reads.search.p50 < TARGET_MS,
      },
      reads && {
        metric: 'GET /failures/{id}/similar p50',
        value: reads.similar.p50,
        unit: 'ms',
        digits: 1,
        target: `< ${TARGET_MS}`,
        ok: reads.similar.p50 < TARGET_MS,
      },
    ].filter(Boolean),
    data: { write, reads },
  };
}
