// Ingest throughput: how many test results per second the service stores, against what the machine's own
// PostgreSQL can take in the cheapest way there is (COPY FROM STDIN of the same rows into a table shaped like
// `results`). Measured in one run, for tests new to the project (every result a test never seen: a suite's first
// run, a new branch's renamed tests) and for known ones (a rerun), both by default (--ingest-tests):
//   1. COPY rate — rows/s of COPY (text format) into bench_copy (LIKE results, no indexes, no foreign keys);
//      for information also into a copy that has the indexes of `results` (what the service must maintain), and
//      the ceiling of any ingest path on this machine: PostgreSQL alone storing the same rows as the service
//      does (transactions of 1000 into that indexed copy) from one connection per core, with UUIDs and without
//      (when reruns are measured, into a table that already holds a previous run of the same tests),
//      and V2's floor: the same rows with UUIDs through a table like ingest_queue, PostgreSQL doing only what that
//      path must (queue each batch, claim, store, count, delete) for bytes built beforehand;
//   2. V1 — POST /api/runs/{id}/results, 1000 results a request, several concurrent clients on one run:
//      results/s = results / wall time (all answered 201, so all committed), and its ratio to COPY;
//   3. V2 — POST /api/v2/projects/{id}/runs/{uuid}/results (202 once queued): results/s from the first request
//      until the run's count shows the last row committed, its ratio to COPY, and the delay from each batch's
//      202 to the moment its rows are visible in `results` (p50/p99) — once with the embedded PostgreSQL-table
//      queue (the shared service) and once with RabbitMQ (a second service, when a broker answers).
// The machine is shared, and one measurement of a second or two swings by a third from one to the next: every
// V1 and V2 figure is measured three times, each time followed by its reference, a plain COPY of the same rows
// (figure, COPY, figure, COPY, figure, COPY); each ratio is a figure over the COPY right after it, and the median
// of the three is reported, all three printed. The information rates of step 1 are medians of three too.
import { execFile } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import http from 'node:http';
import { availableParallelism } from 'node:os';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { promisify } from 'node:util';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { startCpuMeter } from '../lib/cpu.mjs';
import { onCleanup } from '../lib/processes.mjs';
import { fmt, thousands } from '../lib/report.mjs';
import { median, summarize } from '../lib/stats.mjs';

export const name = 'ingest';
export const title = 'Ingest: results/s of V1 and V2 against the machine’s own PostgreSQL COPY rate';
export const TARGET_RATIO = 0.25;
/** Every result a new test (issue #41): V1 in batches of 1,000, and V2. */
export const NEW_TARGETS = { v1: 0.2, v2: 0.18 };

const BATCH = 1000; // results per request (V1's maximum)
const COPY_ROUNDS = 3;
const ROUNDS = 3; // V1 and V2 bursts: each measured this many times, the median reported (the machine is shared)
const COPY_MIN_ROWS = 200_000; // a COPY of 100k rows lasts ~0.3 s: too short to measure steadily
const SEND_CAP_MS = 15_000; // clients stop taking new batches after this long
const DRAIN_CAP_MS = 30_000; // V2: longest wait for the queue to drain after the last 202
const POLL_MS = 20; // V2: how often the committed rows are looked for (during the burst)
const SAMPLES_PER_BATCH = 2; // V2: uuids per batch watched for the 202 → stored delay (first and last)
const SINGLE_BATCHES = 15; // V2: batches sent one at a time (each once the previous is stored): unloaded delay
const SINGLE_POLL_MS = 5;
const BACKENDS = { postgres: /^postgres/, redis: /^redis-server/, rabbitmq: /^beam\.smp$/ };
const COLUMNS =
  'run_id, project_id, test_id, uuid, name, suite, status, duration_ms, message, trace, started_at, attributes, retry';
const AMQP_URL = 'amqp://guest:guest@127.0.0.1:5672';
// Which of the watched UUIDs are stored: one index probe per UUID. (`uuid = ANY($2)` let the planner, with the
// statistics of a table that grew by 100,000s of rows within seconds, scan all of the project's results on
// every poll: a core's worth of PostgreSQL time spent by the bench's own watcher.)
const SEEN_UUIDS = `SELECT s.uuid::text AS uuid FROM unnest($2::uuid[]) AS w(uuid)
  CROSS JOIN LATERAL (SELECT uuid FROM results WHERE project_id = $1 AND uuid = w.uuid LIMIT 1) s`;

const BENCH_TABLES = 'bench_copy, bench_copy_indexed, bench_queue, bench_counts, bench_cases, bench_health';
// The V2 floor's consumers, as the service's (src/ingest-v2/ingest-v2.module.ts): 3 at once, 10 batches each.
const QUEUE_CONSUMERS = 3;
const QUEUE_BATCH = 10;
// A consumer's claim inside its transaction: row locks hold the rows until it commits (and deletes them).
const FLOOR_CLAIM = `SELECT id, payload, batch FROM bench_queue
  WHERE dead_at IS NULL AND available_at <= now() ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED`;

const run_ = promisify(execFile);

export async function run(ctx) {
  const service = await ctx.service();
  const total = ctx.options.ingestResults;
  const clients = ctx.options.ingestClients;
  const batches = Math.ceil(total / BATCH);
  const tests = ctx.options.ingestTests;
  // The kinds of tests measured, each through every path: tests new to the project (a suite's first run, a
  // first import), then known ones (a rerun).
  const modes = tests === 'both' ? ['new', 'rerun'] : [tests];
  ctx.log(
    `${thousands(batches * BATCH)} results per measurement, ${BATCH} a request, ${clients} clients; ` +
      modes.map((m) => MODE_LABEL[m]).join('; then ') +
      `; each figure followed by a plain COPY of ${thousands(Math.max(batches * BATCH, COPY_MIN_ROWS))} rows, ` +
      `its reference: ${ROUNDS} such pairs, the median of their ratios reported`,
  );

  const phases = [];
  const summary = [];
  const data = { batch: BATCH, clients, resultsPerMeasurement: batches * BATCH, tests, modes };
  const copyRows = Math.max(batches * BATCH, COPY_MIN_ROWS);

  // ---- 1. COPY (information: the ceilings and floors of any path here)
  const copy = await measureCopy(ctx, service, copyRows, modes.includes('rerun'), modes.includes('new'));
  data.copy = copy;
  phases.push(...copy.phases.map((p) => ({ ...p, ratio: null })));
  const copyRate = copy.plain.rowsPerSec;
  summary.push(
    { metric: 'PostgreSQL COPY into bench_copy, median', value: copyRate, unit: 'rows/s', digits: 0 },
    {
      metric: 'COPY with the indexes of results (info)',
      value: copy.indexed.rowsPerSec,
      unit: 'rows/s',
      digits: 0,
    },
    ...[
      ['ceilingV1', `${copy.streams} connections, no UUIDs (V1’s rows)`],
      ['ceilingV2', `${copy.streams} connections, with UUIDs (V2’s rows)`],
      ...(copy.ceilingNew
        ? [
            [
              'ceilingNew',
              `${copy.streams} connections, every result a new test (its test case and health COPYed too)`,
            ],
            [
              'ceilingNewBare',
              `${copy.streams} connections, every result a new test, its test case but no health row`,
            ],
          ]
        : []),
      [
        'floorV2',
        `V2’s rows through a table queue, ${clients} senders, ${QUEUE_CONSUMERS} consumers (V2’s floor)`,
      ],
    ].map(([key, what]) => ({
      metric: `ceiling: PostgreSQL alone, ${what}${copy.rerun && !key.startsWith('ceilingNew') ? ', rerun' : ''}, / COPY (info)`,
      value: copy[key].rowsPerSec / copyRate,
      unit: '',
      digits: 3,
    })),
  );

  // The reference of every figure below: a plain COPY of the same rows, measured right after it.
  const reference = await copyReference(service, copyRows);
  data.v1 = {};
  data.v2 = {};
  data.ratios = {};
  try {
    // ---- 2. V1
    const token = await service.login();
    for (const mode of modes) {
      const v1 = await measureV1(ctx, service, token, batches, clients, mode, reference);
      data.v1[mode] = v1;
      data.ratios[`v1.${mode}`] = v1.ratio;
      phases.push(v1.phase);
      summary.push(
        {
          metric: `V1 POST results, 201 = committed, ${MODE_SHORT[mode]}`,
          value: v1.resultsPerSec,
          unit: 'results/s',
          digits: 0,
        },
        ratioLine(`ratio V1 / COPY, ${MODE_SHORT[mode]}`, v1.rounds, targetOf('v1', mode)),
      );
    }

    // ---- 3. V2, PostgreSQL-table queue (the shared service), then RabbitMQ (a second service)
    const variants = [{ key: 'pgQueue', label: 'V2, PostgreSQL-table queue', service: () => service }];
    const rabbit = await rabbitAvailable();
    if (rabbit.ok) {
      const queue = `bench.ingest.${process.pid}`;
      variants.push({
        key: 'rabbitmq',
        label: 'V2, RabbitMQ queue',
        queue,
        service: async () => {
          // Registered before the service starts, so it runs after the service has stopped (LIFO).
          onCleanup(() => deleteQueues([queue, `${queue}.dead`]));
          ctx.log(`starting a second service with SVC_BROKER_AMQP_URL (queue ${queue})…`);
          return ctx.startServiceVariant('rabbitmq', {
            SVC_BROKER_AMQP_URL: AMQP_URL,
            SVC_BROKER_QUEUE: queue,
          });
        },
      });
    } else {
      ctx.log(`RabbitMQ not measured: ${rabbit.reason}`);
      data.rabbitmqSkipped = rabbit.reason;
    }
    for (const variant of variants) {
      let target;
      try {
        target = await variant.service();
        const variantToken = target === service ? token : await target.login();
        for (const mode of modes) {
          const key = `${variant.key}.${mode}`;
          const label = `${variant.label}, ${MODE_SHORT[mode]}`;
          let v2;
          try {
            v2 = await measureV2(
              ctx,
              target,
              variantToken,
              batches,
              clients,
              { ...variant, label },
              mode,
              reference,
            );
          } catch (error) {
            ctx.log(`${label} failed: ${error.message}`);
            data.v2[key] = { error: String(error.message ?? error) };
            summary.push({
              metric: `${label}: ${String(error.message).slice(0, 60)}`,
              value: null,
              unit: '',
              error: true,
            });
            continue;
          }
          data.v2[key] = v2;
          data.ratios[`v2.${key}`] = v2.ratio;
          phases.push(v2.phase);
          const short = variant.key === 'rabbitmq' ? 'V2 (RabbitMQ)' : 'V2 (pg queue)';
          summary.push(
            {
              metric: `${label}: first request → last row committed`,
              value: v2.resultsPerSec,
              unit: 'results/s',
              digits: 0,
            },
            ratioLine(`ratio ${short} / COPY, ${MODE_SHORT[mode]}`, v2.rounds, targetOf('v2', mode)),
            { metric: `${label}: 202 → stored p50`, value: v2.ackToStoredMs.p50, unit: 'ms', digits: 0 },
            { metric: `${label}: 202 → stored p99`, value: v2.ackToStoredMs.p99, unit: 'ms', digits: 0 },
            {
              metric: `${label}: 202 → stored p50, one batch at a time`,
              value: v2.singleAckToStoredMs.p50,
              unit: 'ms',
              digits: 0,
            },
          );
        }
      } catch (error) {
        ctx.log(`${variant.label} failed: ${error.message}`);
        data.v2[variant.key] = { error: String(error.message ?? error) };
        summary.push({
          metric: `${variant.label}: ${String(error.message).slice(0, 60)}`,
          value: null,
          unit: '',
          error: true,
        });
      } finally {
        if (target && target !== service) {
          await target.stop(); // its CPU (idle consumer) should not weigh on what follows
        }
      }
    }
  } finally {
    await reference.close();
  }
  data.targets = { rerun: TARGET_RATIO, new: NEW_TARGETS };

  const tables = [
    {
      title:
        'phases (rate in rows or results per second; / COPY: the median of the ratios to the plain COPY measured ' +
        'after each figure; cpu in cores, of the round of median ratio: server = the service under test, bench = ' +
        'this process incl. its polling; machine = whole box incl. other tenants; WAL = written by the whole ' +
        'cluster during the phase, per row)',
      headers: [
        'what',
        'rows',
        'wall s',
        'rows/s',
        '/ COPY',
        'req p50 ms',
        'req p99 ms',
        'server cpu',
        'postgres cpu',
        'rabbitmq cpu',
        'bench cpu',
        'machine cpu',
        'WAL B/row',
      ],
      rows: phases.map((p) => [
        p.label,
        p.rows,
        fmt(p.wallSec, 2),
        fmt(p.rate, 0),
        p.ratio === null ? null : fmt(p.ratio, 3),
        fmt(p.reqMs?.p50, 0),
        fmt(p.reqMs?.p99, 0),
        fmt(p.cpu.server, 2),
        fmt(p.cpu.postgres, 2),
        fmt(p.cpu.rabbitmq, 2),
        fmt(p.cpu.bench, 2),
        fmt(p.cpu.machine, 2),
        p.wal ? fmt(p.wal.bytes / p.rows, 0) : null,
      ]),
    },
    {
      title:
        'each figure and its reference (the plain COPY right after it), in the order measured: the ratios whose ' +
        'median is reported',
      headers: ['what', 'round', 'results/s', 'COPY rows/s', 'ratio'],
      rows: [
        ...Object.entries(data.v1).map(([mode, v]) => [`V1, ${MODE_SHORT[mode]}`, v]),
        ...Object.entries(data.v2)
          .filter(([, v]) => v.rounds)
          .map(([key, v]) => [`V2 ${key}`, v]),
      ].flatMap(([what, v]) =>
        v.rounds.map((r, i) => [what, i + 1, fmt(r.resultsPerSec, 0), fmt(r.copyRate, 0), fmt(r.ratio, 3)]),
      ),
    },
  ];
  const v2Rows = Object.entries(data.v2).filter(([, v]) => v.ackToStoredMs);
  if (v2Rows.length) {
    tables.push({
      title:
        `V2: delay from a batch's 202 to its rows committed, ms (${SAMPLES_PER_BATCH} uuids a batch watched; ` +
        `burst: all batches as fast as the clients go, polled every ${POLL_MS} ms; single: one batch at a time, ` +
        `the next once the previous is stored, polled every ${SINGLE_POLL_MS} ms)`,
      headers: ['queue', 'load', 'batches', 'mean', 'p50', 'p90', 'p99', 'max', 'results/s at the door'],
      rows: v2Rows.flatMap(([key, v]) =>
        [
          ['burst', v.ackToStoredMs, v.doorResultsPerSec],
          ['single', v.singleAckToStoredMs, null],
        ].map(([load, m, door]) => [
          key,
          load,
          m.count,
          fmt(m.mean, 0),
          fmt(m.p50, 0),
          fmt(m.p90, 0),
          fmt(m.p99, 0),
          fmt(m.max, 0),
          fmt(door, 0),
        ]),
      ),
    });
  }
  return { tables, summary, data };
}

const MODE_LABEL = {
  new: 'every result a new test',
  rerun: 'tests the project already has (a previous run of them sent first, unmeasured)',
};
const MODE_SHORT = { new: 'new tests', rerun: 'rerun' };

/** The ratio a path must reach: known tests (a rerun), and tests new to the project (issue #41). */
function targetOf(path, mode) {
  return mode === 'new' ? NEW_TARGETS[path] : TARGET_RATIO;
}

/** A summary line: the median of the rounds' ratios, all of them named. */
function ratioLine(metric, rounds, target) {
  const ratios = rounds.map((r) => r.ratio);
  const ratio = median(ratios);
  return {
    metric: `${metric} (median of ${ratios.map((r) => r.toFixed(3)).join(', ')})`,
    value: ratio,
    unit: '',
    digits: 3,
    target: `≥ ${target}`,
    ok: ratio >= target,
  };
}

// ---------------------------------------------------------------------------------------------------------
// Data: the same results for every path. ~10% FAILED with a short message, the rest PASSED; every result a
// distinct test (suite + name), 50 tests a suite. Called twice with one prefix, it gives the same tests (with
// other UUIDs): a previous run of the suite, then the measured rerun (--ingest-tests=rerun, the default).

export function makeResults(count, prefix, { uuids = false } = {}) {
  const out = new Array(count);
  for (let i = 0; i < count; i++) {
    const failed = i % 10 === 7;
    const r = {
      name: `should handle case ${i} of ${prefix}`,
      suite: `com.example.${prefix}.module${Math.floor(i / 5000)}.Suite${Math.floor(i / 50)}`,
      status: failed ? 'FAILED' : 'PASSED',
      durationMs: (i * 7919) % 2000,
    };
    if (failed) {
      r.message = `AssertionError: expected status 200 but was 500 (case ${i})`;
    }
    if (uuids) {
      r.uuid = randomUUID();
    }
    out[i] = r;
  }
  return out;
}

export function chunk(items, size) {
  const out = [];
  for (let i = 0; i < items.length; i += size) {
    out.push(items.slice(i, i + size));
  }
  return out;
}

/** COPY text-format field: backslash, tab, newline and carriage return escaped; null as \N. */
export function copyField(value) {
  if (value === null || value === undefined) {
    return '\\N';
  }
  return String(value).replace(
    /[\\\t\n\r]/g,
    (c) => ({ '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' })[c],
  );
}

/**
 * `firstId`: ids given in the rows (as the service gives them) from this one; by default the table's own.
 * `firstTestId`: the test of the first row, the next rows' tests counting up from it; `runId`: their run.
 */
function copyText(results, { firstTestId = 1, firstId, runId = 1 } = {}) {
  const lines = results.map((r, i) =>
    [
      ...(firstId === undefined ? [] : [firstId + i]),
      runId,
      1, // project_id
      firstTestId + i, // test_id
      r.uuid,
      r.name,
      r.suite,
      r.status,
      r.durationMs,
      r.message,
      null, // trace
      null, // started_at
      '{}', // attributes
      0, // retry
    ]
      .map(copyField)
      .join('\t'),
  );
  // ~64 KiB chunks, as a client streaming a file would send them.
  const chunks = [];
  let current = '';
  for (const line of lines) {
    current += `${line}\n`;
    if (current.length >= 65_536) {
      chunks.push(Buffer.from(current));
      current = '';
    }
  }
  if (current) {
    chunks.push(Buffer.from(current));
  }
  return chunks;
}

// ---------------------------------------------------------------------------------------------------------
// 1. COPY

async function measureCopy(ctx, service, rows, rerun, newTests) {
  const client = new pg.Client({ connectionString: service.db.url });
  await client.connect();
  try {
    // A normal (logged) table like results, as the service writes a normal table; LIKE copies no foreign keys.
    await client.query(`DROP TABLE IF EXISTS ${BENCH_TABLES}`);
    await client.query('CREATE TABLE bench_copy (LIKE results INCLUDING DEFAULTS INCLUDING IDENTITY)');
    await client.query('CREATE TABLE bench_copy_indexed (LIKE results INCLUDING ALL)');
    // The V2 floor's queue: ingest_queue as the service has it (text payload, its compression, the live index),
    // plus the number of the batch a row carries, and a run's counts.
    await client.query('CREATE TABLE bench_queue (LIKE ingest_queue INCLUDING ALL)');
    await client.query('ALTER TABLE bench_queue ADD COLUMN batch integer');
    await client.query('CREATE TABLE bench_counts (id integer PRIMARY KEY, total bigint NOT NULL)');
    await client.query('INSERT INTO bench_counts VALUES (1, 0)');
    // New tests' own rows (issue #41): a test case and its health, with every index the service keeps on them.
    await client.query('CREATE TABLE bench_cases (LIKE test_cases INCLUDING ALL)');
    await client.query('CREATE TABLE bench_health (LIKE test_health INCLUDING ALL)');
    const chunks = copyText(makeResults(rows, 'copy', { uuids: true }));
    const bytes = chunks.reduce((n, c) => n + c.length, 0);

    // One measurement: `work()` stores `rows` rows into `table` (emptied first, then given `before`, unmeasured).
    const once = async (table, work, before) => {
      await client.query(`TRUNCATE ${table}, bench_queue`);
      await client.query('CHECKPOINT').catch(() => {}); // needs superuser or pg_checkpoint; fine without
      if (before) {
        await copyRows(client, table, `id, ${COLUMNS}`, before);
      }
      const phase = await startPhase(client);
      const started = performance.now();
      const stored = await work();
      const wallSec = (performance.now() - started) / 1000;
      const { cores, wal } = await phase.stop();
      if (stored !== rows) {
        throw new Error(`COPY into ${table} stored ${stored} rows, expected ${rows}`);
      }
      return { wallSec, rate: rows / wallSec, cpu: cores, wal };
    };
    const copyAll = (table) => () => copyRows(client, table, COLUMNS, chunks);
    // The ceiling of any ingest path here: PostgreSQL alone, on every core, storing the rows as the service
    // does (transactions of BATCH rows into a table with the indexes of results), with no HTTP, JSON or
    // queue in front of it. With UUIDs (V2's rows, which the unique index takes) and without (V1's).
    // With --ingest-tests=rerun (the default, as the service is measured), the table first holds a previous run
    // of the same tests (run 1, unmeasured), and the measured rows (run 2) are of those tests again: each row's
    // entry in the test-history index lands among its test's earlier ones, as the service's do, rather than at
    // the end of the index; with UUIDs, the unique index already holds the previous run's.
    const streams = Math.max(2, availableParallelism());
    const writers = [];
    const batchesOf = (results, { runId, firstId }) =>
      chunk(results, BATCH).map((batch, i) =>
        copyText(batch, { firstTestId: 1 + i * BATCH, firstId: firstId + i * BATCH, runId }),
      );
    const measured = rerun ? { runId: 2, firstId: rows + 1 } : { runId: 1, firstId: 1 };
    const v2Results = makeResults(rows, 'copy', { uuids: true });
    const withUuids = batchesOf(v2Results, measured);
    // What the V2 door queues for each batch: the message with the batch as its client sent it.
    const payloads = chunk(v2Results, BATCH).map((items) =>
      Buffer.from(
        JSON.stringify({ kind: 'results', projectId: '1', runUuid: randomUUID(), batch: { results: items } }),
      ),
    );
    const withoutUuids = batchesOf(makeResults(rows, 'copy'), measured);
    const previousRun = (uuids) =>
      rerun ? batchesOf(makeResults(rows, 'copy', { uuids }), { runId: 1, firstId: 1 }).flat() : undefined;
    // The ceiling of any path storing new tests: each transaction COPYs the batch's test cases (ids given), their
    // health rows (one run each) and their results, with nothing looked up first and no ON CONFLICT: the least
    // PostgreSQL can do to store them, whatever the service in front of it does.
    const newBatches = newTests
      ? chunk(makeResults(rows, 'copy'), BATCH).map((batch, i) => {
          const first = 1 + i * BATCH;
          const cases = [];
          const health = [];
          batch.forEach((r, j) => {
            const id = first + j;
            const identity = createHash('md5').update(`${r.suite}\u0000${r.name}`).digest('hex');
            cases.push([id, 1, identity, null, r.suite, r.name].map(copyField).join('\t'));
            const failed = r.status === 'FAILED';
            const win = `\\x${id.toString(16).padStart(12, '0')}${failed ? '22' : '11'}${'0'.repeat(16)}`;
            const at = '2026-11-28 12:00:00+00';
            health.push(
              [
                id,
                1,
                win,
                1,
                0, // flake_rate: 0 until a test has run twice (migration TestHealthSecondRunHot)
                'f',
                r.status,
                1,
                at,
                failed ? at : null,
                failed ? 'FAILING' : 'HEALTHY',
                0,
              ]
                .map(copyField)
                .join('\t'),
            );
          });
          return {
            cases: [Buffer.from(`${cases.join('\n')}\n`)],
            health: [Buffer.from(`${health.join('\n')}\n`)],
            results: copyText(batch, { firstTestId: first, firstId: first, runId: 1 }),
          };
        })
      : [];
    // `store(writer, batch)` for each batch, in a transaction of its own, from every writer at once; the results stored.
    const inBatches = (batches, store) => async () => {
      let next = 0;
      let stored = 0;
      await Promise.all(
        writers.map(async (writer) => {
          while (next < batches.length) {
            const batch = batches[next++];
            await writer.query('BEGIN');
            const copied = await store(writer, batch);
            await writer.query('COMMIT');
            stored += copied;
          }
        }),
      );
      return stored;
    };
    const copyInBatches = (table, batches) =>
      inBatches(batches, (writer, batch) => copyRows(writer, table, `id, ${COLUMNS}`, batch));
    // A batch of new tests: its test cases, their health rows (unless `health` is false) and its results.
    const copyNew = (health) =>
      inBatches(newBatches, async (writer, batch) => {
        await copyRows(
          writer,
          'bench_cases',
          'id, project_id, identity, external_id, suite, name',
          batch.cases,
        );
        if (health) {
          await copyRows(
            writer,
            'bench_health',
            'test_id, project_id, win, runs, flake_rate, flaky, last_status, last_run_id, first_seen_at, ' +
              'last_failed_at, state, q_passes',
            batch.health,
          );
        }
        return copyRows(writer, 'bench_copy_indexed', `id, ${COLUMNS}`, batch.results);
      });
    const copyNewInBatches = copyNew(true);
    // The same without the health rows (issue #41: what test health's rows, kept in the writer's transaction, cost).
    const copyNewWithoutHealth = copyNew(false);

    // The floor of V2 with the table queue: PostgreSQL doing only what that path must do, from bytes built
    // beforehand (no HTTP, JSON, validation or COPY text to build). `senders` connections (one per bench client)
    // queue the batches; QUEUE_CONSUMERS connections each claim up to QUEUE_BATCH of them at a time and, in one
    // transaction, store their rows, count them and delete them (the service spends more: a lease and a
    // separate delete, a savepoint, run locks). Any V2 path with this queue stays below this rate.
    const senders = [];
    const consumers = [];
    const throughQueue = (batches, payloads) => async () => {
      let next = 0;
      let stored = 0;
      const send = async (sender) => {
        while (next < payloads.length) {
          const i = next++;
          await sender.query('INSERT INTO bench_queue (payload, batch) VALUES ($1, $2)', [payloads[i], i]);
        }
      };
      const consume = async (consumer) => {
        while (stored < rows) {
          await consumer.query('BEGIN');
          const { rows: claimed } = await consumer.query(FLOOR_CLAIM, [QUEUE_BATCH]);
          if (!claimed.length) {
            await consumer.query('COMMIT');
            await new Promise((resolve) => setTimeout(resolve, 1));
            continue;
          }
          const copied = await copyRows(
            consumer,
            'bench_copy_indexed',
            `id, ${COLUMNS}`,
            claimed.flatMap((row) => batches[row.batch]),
          );
          await consumer.query('UPDATE bench_counts SET total = total + $1 WHERE id = 1', [copied]);
          await consumer.query('DELETE FROM bench_queue WHERE id = ANY($1::bigint[])', [
            claimed.map((row) => row.id),
          ]);
          await consumer.query('COMMIT');
          stored += copied;
        }
      };
      await Promise.all([...senders.map(send), ...consumers.map(consume)]);
      return stored;
    };

    const result = {};
    const phases = [];
    const connect = async (list, n) => {
      for (let i = 0; i < n; i++) {
        const connection = new pg.Client({ connectionString: service.db.url });
        list.push(connection);
        await connection.connect();
      }
    };
    try {
      await connect(writers, streams);
      await connect(senders, ctx.options.ingestClients);
      await connect(consumers, QUEUE_CONSUMERS);
      for (const [key, table, work, label, before] of [
        ['plain', 'bench_copy', copyAll('bench_copy'), 'COPY → bench_copy (no indexes)'],
        [
          'indexed',
          'bench_copy_indexed',
          copyAll('bench_copy_indexed'),
          'COPY → copy with results’ indexes (info)',
        ],
        [
          'ceilingV1',
          'bench_copy_indexed',
          copyInBatches('bench_copy_indexed', withoutUuids),
          `  same, ${BATCH} a transaction, ${streams} connections, no UUIDs${rerun ? ', a rerun' : ''}`,
          previousRun(false),
        ],
        [
          'ceilingV2',
          'bench_copy_indexed',
          copyInBatches('bench_copy_indexed', withUuids),
          `  same, ${BATCH} a transaction, ${streams} connections, with UUIDs${rerun ? ', a rerun' : ''}`,
          previousRun(true),
        ],
        ...(newTests
          ? [
              [
                'ceilingNew',
                'bench_copy_indexed, bench_cases, bench_health',
                copyNewInBatches,
                `  same, ${BATCH} a transaction, ${streams} connections, every result a new test (test case and health COPYed too)`,
              ],
              [
                'ceilingNewBare',
                'bench_copy_indexed, bench_cases',
                copyNewWithoutHealth,
                `  same, ${BATCH} a transaction, ${streams} connections, every result a new test, its test case COPYed too but no health row (info)`,
              ],
            ]
          : []),
        [
          'floorV2',
          'bench_copy_indexed',
          throughQueue(withUuids, payloads),
          `  same rows through a table queue (${senders.length} senders, ${QUEUE_CONSUMERS} consumers, ${QUEUE_BATCH} batches a transaction)`,
          previousRun(true),
        ],
      ]) {
        const runs = [];
        for (let i = 0; i < COPY_ROUNDS; i++) {
          runs.push(await once(table, work, before));
        }
        const med = median(runs.map((r) => r.rate));
        const mid = runs.find((r) => r.rate === med) ?? runs[0];
        ctx.log(
          `${label.trim()}: ${runs.map((r) => thousands(r.rate)).join(', ')} rows/s (median ${thousands(med)})`,
        );
        result[key] = { rowsPerSec: med, runs };
        phases.push({
          label,
          rows,
          wallSec: mid.wallSec,
          rate: med,
          cpu: { server: null, ...mid.cpu },
          wal: mid.wal,
        });
      }
    } finally {
      await Promise.all([...writers, ...senders, ...consumers].map((c) => c.end().catch(() => {})));
    }
    return { rows, bytes, format: 'text', rounds: COPY_ROUNDS, streams, rerun, ...result, phases };
  } finally {
    await client.query(`DROP TABLE IF EXISTS ${BENCH_TABLES}`).catch(() => {});
    await client.end();
  }
}

/**
 * The reference of each figure: a plain COPY of `rows` rows (as measureCopy's first) into a table of its own,
 * emptied first, measured as often as asked, right after the figure it is the reference of (no CHECKPOINT before
 * it: the figure after it would pay for the full-page images). measure() resolves to { rate, wallSec }.
 */
async function copyReference(service, rows) {
  const client = new pg.Client({ connectionString: service.db.url });
  await client.connect();
  await client.query('DROP TABLE IF EXISTS bench_copy_ref');
  await client.query('CREATE TABLE bench_copy_ref (LIKE results INCLUDING DEFAULTS INCLUDING IDENTITY)');
  const chunks = copyText(makeResults(rows, 'copy', { uuids: true }));
  return {
    async measure() {
      await client.query('TRUNCATE bench_copy_ref');
      const started = performance.now();
      const stored = await copyRows(client, 'bench_copy_ref', COLUMNS, chunks);
      const wallSec = (performance.now() - started) / 1000;
      if (stored !== rows) {
        throw new Error(`COPY into bench_copy_ref stored ${stored} rows, expected ${rows}`);
      }
      return { rate: rows / wallSec, wallSec };
    },
    async close() {
      await client.query('DROP TABLE IF EXISTS bench_copy_ref').catch(() => {});
      await client.end();
    },
  };
}

/** COPYs `chunks` (COPY text) into `table` (`columns`) through `connection`; resolves to the rows stored. */
async function copyRows(connection, table, columns, chunks) {
  const stream = connection.query(copyFrom(`COPY ${table} (${columns}) FROM STDIN`));
  await pipeline(Readable.from(chunks), stream);
  return stream.rowCount;
}

/**
 * Starts the meters of one phase: the CPU of PostgreSQL's, Redis's and RabbitMQ's processes, of `pids` and of
 * this process, and the WAL the cluster writes (read through `client`). stop() resolves to { cores, wal }.
 */
async function startPhase(client, pids = {}) {
  const wal = await startWalMeter(client);
  const bench0 = process.cpuUsage();
  const meter = startCpuMeter({ pids, named: BACKENDS });
  return {
    async stop() {
      const { cores } = meter.stop({ bench: cpuSeconds(bench0) });
      return { cores, wal: await wal.stop() };
    },
  };
}

/**
 * WAL written by the whole PostgreSQL cluster during a phase, in bytes (the distance between two insert
 * positions, exact, unlike pg_stat_wal, which backends flush at most once a second): what the disk must take.
 */
async function startWalMeter(client) {
  const read = async () => {
    try {
      const { rows } = await client.query('SELECT pg_current_wal_insert_lsn()::text AS lsn');
      return rows[0].lsn;
    } catch {
      return null; // a standby, or no permission: the column stays empty
    }
  };
  const before = await read();
  return {
    async stop() {
      const after = await read();
      if (!before || !after) {
        return null;
      }
      const { rows } = await client.query('SELECT pg_wal_lsn_diff($1, $2)::float8 AS bytes', [after, before]);
      return { bytes: rows[0].bytes };
    },
  };
}

function cpuSeconds(start) {
  const d = process.cpuUsage(start);
  return (d.user + d.system) / 1e6;
}

// ---------------------------------------------------------------------------------------------------------
// HTTP helpers

export async function api(service, token, method, path, body, expect) {
  const res = await fetch(`${service.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status !== expect) {
    const error = new Error(
      `${method} ${path} answered ${res.status} (expected ${expect}): ${text.slice(0, 300)}`,
    );
    error.status = res.status;
    throw error;
  }
  return text ? JSON.parse(text) : undefined;
}

let projectSeq = 0;
export async function createProject(service, token, label) {
  projectSeq += 1;
  return api(
    service,
    token,
    'POST',
    '/api/projects',
    { key: `BENCH_${label}_${projectSeq}`, name: `bench ${label} ${projectSeq}` },
    201,
  );
}

/**
 * Sends the pre-encoded `bodies` (Buffers) to `path(i)` from `clients` concurrent loops, each taking the next batch
 * until none is left or SEND_CAP_MS has passed. onAnswer(i, time) is called as each expected answer arrives.
 * Resolves to { sent (batches), latencies (ms) }.
 *
 * Through node:http on kept-alive connections with the bodies encoded beforehand, not fetch(): the load
 * generator shares the machine's two cores with the service and PostgreSQL, and fetch spent ~1 ms of CPU per
 * 150 KB request against ~0.3 ms (a quarter of a core at V1's rate, taken from what is measured).
 */
export async function drive({ service, token, bodies, path, expect, clients, onAnswer }) {
  const deadline = performance.now() + SEND_CAP_MS;
  const { hostname, port } = new URL(service.url);
  const agent = new http.Agent({ keepAlive: true, maxSockets: clients });
  const latencies = [];
  let next = 0;
  let failed;
  const loop = async () => {
    while (!failed && next < bodies.length && performance.now() < deadline) {
      const i = next++;
      const started = performance.now();
      let res;
      try {
        res = await post(agent, {
          hostname,
          port,
          path: path(i),
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: bodies[i],
        });
      } catch (error) {
        failed ??= new Error(`POST ${path(i)}: ${error.code ?? error.message}`);
        return;
      }
      const answered = performance.now();
      if (res.status !== expect) {
        failed ??= new Error(
          `POST ${path(i)} answered ${res.status} (expected ${expect}): ${res.text.slice(0, 300)}`,
        );
        return;
      }
      latencies.push(answered - started);
      onAnswer?.(i, answered, res.text);
    }
  };
  try {
    await Promise.all(Array.from({ length: clients }, loop));
  } finally {
    agent.destroy();
  }
  if (failed) {
    throw failed;
  }
  return { sent: latencies.length, latencies };
}

/** One POST of a Buffer; resolves to { status, text } once the whole answer is read. */
function post(agent, { hostname, port, path, headers, body }) {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { agent, hostname, port, path, method: 'POST', headers: { ...headers, 'content-length': body.length } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (part) => (text += part));
        res.on('end', () => resolve({ status: res.statusCode, text }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

// ---------------------------------------------------------------------------------------------------------
// 2. V1

async function measureV1(ctx, service, token, batches, clients, mode, reference) {
  const project = await createProject(service, token, mode === 'new' ? 'V1NEW' : 'V1');
  // Warm-up (JIT, pools, plans): a few batches into a run of their own.
  const warm = await api(
    service,
    token,
    'POST',
    `/api/projects/${project.id}/runs`,
    { name: 'warm-up' },
    201,
  );
  for (const items of chunk(makeResults(3 * BATCH, `warmv1${mode}`), BATCH)) {
    await api(service, token, 'POST', `/api/runs/${warm.id}/results`, { results: items }, 201);
  }

  // Encoded beforehand: building the requests is not what is measured. With new tests, every round gets tests of
  // its own; otherwise every round reruns the tests of the previous run.
  const newTests = mode === 'new';
  const bodiesOf = (prefix) =>
    chunk(makeResults(batches * BATCH, prefix), BATCH).map((items) =>
      Buffer.from(JSON.stringify({ results: items })),
    );
  let bodies = bodiesOf(newTests ? 'v1new' : 'v1');
  if (!newTests) {
    const previous = await api(
      service,
      token,
      'POST',
      `/api/projects/${project.id}/runs`,
      { name: 'bench V1, previous run' },
      201,
    );
    ctx.log(`V1: a previous run of the same ${thousands(bodies.length * BATCH)} tests (not measured)…`);
    await drive({
      service,
      token,
      bodies,
      path: () => `/api/runs/${previous.id}/results`,
      expect: 201,
      clients,
    });
  }

  const rounds = [];
  const walClient = new pg.Client({ connectionString: service.db.url });
  await walClient.connect();
  try {
    for (let round = 1; round <= ROUNDS; round++) {
      if (newTests && round > 1) {
        bodies = bodiesOf(`v1newr${round}`);
      }
      const run = await api(
        service,
        token,
        'POST',
        `/api/projects/${project.id}/runs`,
        { name: `bench V1, round ${round}` },
        201,
      );
      const phase = await startPhase(walClient, { server: service.pid });
      const started = performance.now();
      const { sent, latencies } = await drive({
        service,
        token,
        bodies,
        path: () => `/api/runs/${run.id}/results`,
        expect: 201,
        clients,
      });
      const wallSec = (performance.now() - started) / 1000;
      const { cores, wal } = await phase.stop();

      const results = sent * BATCH;
      const stored = await api(service, token, 'GET', `/api/runs/${run.id}`, undefined, 200);
      if (stored.counts.total !== results) {
        throw new Error(`V1: the run counts ${stored.counts.total} results, ${results} were sent`);
      }
      const rate = results / wallSec;
      const copy = await reference.measure();
      rounds.push({
        results,
        wallSec,
        rate,
        copyRate: copy.rate,
        ratio: rate / copy.rate,
        latencies,
        cores,
        wal,
      });
    }
  } finally {
    await walClient.end();
  }
  const mid = medianRound(rounds);
  const reqMs = summarize(rounds.flatMap((r) => r.latencies));
  const ratio = median(rounds.map((r) => r.ratio));
  ctx.log(
    `V1, ${MODE_SHORT[mode]}: ${bodies.length} × POST /api/runs/{id}/results from ${clients} clients, ${ROUNDS} rounds: ` +
      rounds
        .map(
          (r) =>
            `${thousands(r.rate)} results/s / COPY ${thousands(r.copyRate)} rows/s = ${r.ratio.toFixed(3)}`,
        )
        .join('; ') +
      ` (median ratio ${ratio.toFixed(3)}; request p50 ${reqMs.p50.toFixed(0)} ms, p99 ${reqMs.p99.toFixed(0)} ms)`,
  );
  return {
    results: mid.results,
    wallSec: mid.wallSec,
    resultsPerSec: median(rounds.map((r) => r.rate)),
    ratio,
    rounds: rounds.map(({ results, wallSec, rate, copyRate, ratio }) => ({
      results,
      wallSec,
      resultsPerSec: rate,
      copyRate,
      ratio,
    })),
    requestMs: reqMs,
    cpu: mid.cores,
    phase: {
      label: `V1 POST /api/runs/{id}/results, ${MODE_SHORT[mode]}`,
      rows: mid.results,
      wallSec: mid.wallSec,
      rate: mid.rate,
      ratio,
      reqMs,
      cpu: mid.cores,
      wal: mid.wal,
    },
  };
}

/** The round of median ratio (the lower middle one for an even count): its CPU and WAL go with it. */
function medianRound(rounds) {
  const sorted = [...rounds].sort((a, b) => a.ratio - b.ratio);
  return sorted[Math.floor((sorted.length - 1) / 2)];
}

// ---------------------------------------------------------------------------------------------------------
// 3. V2

async function measureV2(ctx, service, token, batches, clients, variant, mode, reference) {
  const project = await createProject(
    service,
    token,
    `${variant.key === 'rabbitmq' ? 'V2MQ' : 'V2PG'}${mode === 'new' ? 'NEW' : ''}`,
  );
  const base = `/api/v2/projects/${project.id}/runs`;
  const db = new pg.Client({ connectionString: service.db.url });
  await db.connect();
  try {
    // Warm-up: a run of its own with a few batches, waited for until stored, so the consumer is warm too.
    const warmUuid = randomUUID();
    await api(service, token, 'POST', base, { uuid: warmUuid, name: 'warm-up' }, 202);
    const warmBodies = chunk(makeResults(3 * BATCH, `warmv2${mode}`, { uuids: true }), BATCH);
    for (const items of warmBodies) {
      await api(service, token, 'POST', `${base}/${warmUuid}/results`, { results: items }, 202);
    }
    await waitForCount(db, project.id, warmUuid, 3 * BATCH, DRAIN_CAP_MS, `${variant.label} warm-up`);

    if (mode === 'rerun') {
      const previousUuid = randomUUID();
      await api(service, token, 'POST', base, { uuid: previousUuid, name: 'bench V2, previous run' }, 202);
      const previous = chunk(makeResults(batches * BATCH, `v2${variant.key}`, { uuids: true }), BATCH);
      ctx.log(
        `${variant.label}: a previous run of the same ${thousands(previous.length * BATCH)} tests (not measured)…`,
      );
      await drive({
        service,
        token,
        bodies: previous.map((items) => Buffer.from(JSON.stringify({ results: items }))),
        path: () => `${base}/${previousUuid}/results`,
        expect: 202,
        clients,
      });
      await waitForCount(
        db,
        project.id,
        previousUuid,
        previous.length * BATCH,
        DRAIN_CAP_MS,
        `${variant.label} previous run`,
      );
    }

    // One burst: all batches as fast as the clients go, into a run of its own, until the last row is committed.
    const burst = async (round) => {
      const runUuid = randomUUID();
      // New UUIDs every round; the same tests (a rerun), or new ones every round.
      const prefix = mode === 'new' ? `v2${variant.key}newr${round}` : `v2${variant.key}`;
      const batchItems = chunk(makeResults(batches * BATCH, prefix, { uuids: true }), BATCH);
      const bodies = batchItems.map((items) => Buffer.from(JSON.stringify({ results: items })));
      const samples = batchItems.map((items) => {
        const picks = new Set([0, items.length - 1, Math.floor(items.length / 2)]);
        return [...picks].slice(0, SAMPLES_PER_BATCH).map((i) => items[i].uuid);
      });

      const acked = new Map(); // batch index → time of its 202, until its rows are seen
      const delays = [];
      let clientsDone = false;
      let lastAck = 0;
      let sentResults = 0;

      const phase = await startPhase(db, { server: service.pid });
      const started = performance.now();
      await api(service, token, 'POST', base, { uuid: runUuid, name: `bench V2, round ${round}` }, 202);

      // The watcher: every POLL_MS, which of the acknowledged batches have their sampled rows committed, and
      // how far the run's count has got. Done when every batch sent is counted.
      let committedAt;
      let watchError;
      let sendOutcome;
      let sendError;
      const watcher = (async () => {
        const deadline = () => (clientsDone ? lastAck + DRAIN_CAP_MS : Infinity);
        while (performance.now() < deadline()) {
          if (sendError) {
            return;
          }
          const pending = [...acked.keys()];
          if (pending.length) {
            const uuids = pending.flatMap((i) => samples[i]);
            const { rows } = await db.query(SEEN_UUIDS, [project.id, uuids]);
            const now = performance.now();
            const seen = new Set(rows.map((r) => r.uuid));
            for (const i of pending) {
              if (samples[i].every((u) => seen.has(u))) {
                delays.push(now - acked.get(i));
                acked.delete(i);
              }
            }
          }
          if (clientsDone) {
            const { rows } = await db.query(
              'SELECT count_total FROM runs WHERE project_id = $1 AND uuid = $2',
              [project.id, runUuid],
            );
            if (rows[0] && rows[0].count_total >= sentResults && acked.size === 0) {
              committedAt = performance.now();
              return;
            }
          }
          await new Promise((resolve) => setTimeout(resolve, POLL_MS));
        }
        watchError = new Error(
          `${variant.label}: rows still missing ${DRAIN_CAP_MS / 1000} s after the last 202 ` +
            `(${acked.size} batches not seen stored)`,
        );
      })();

      try {
        sendOutcome = await drive({
          service,
          token,
          bodies,
          path: () => `${base}/${runUuid}/results`,
          expect: 202,
          clients,
          onAnswer: (i, at) => {
            acked.set(i, at);
            lastAck = at;
            sentResults += batchItems[i].length;
          },
        });
      } catch (error) {
        sendError = error;
      } finally {
        clientsDone = true;
      }
      await watcher;
      const { cores, wal: walUsed } = await phase.stop();
      if (sendError ?? watchError) {
        throw sendError ?? watchError;
      }

      const results = sendOutcome.sent * BATCH;
      const wallSec = (committedAt - started) / 1000;
      const doorSec = (lastAck - started) / 1000;
      const status = await api(service, token, 'GET', `${base}/${runUuid}`, undefined, 200);
      if (status.counts?.total !== results) {
        throw new Error(
          `${variant.label}: GET ${base}/${runUuid} counts ${status.counts?.total}, ${results} were sent`,
        );
      }
      return {
        results,
        wallSec,
        rate: results / wallSec,
        doorSec,
        latencies: sendOutcome.latencies,
        delays,
        cores,
        wal: walUsed,
      };
    };
    ctx.log(
      `${variant.label}: ${batches} × POST ${base}/{runUuid}/results from ${clients} clients, ${ROUNDS} rounds…`,
    );
    const bursts = [];
    for (let round = 1; round <= ROUNDS; round++) {
      const b = await burst(round);
      const copy = await reference.measure();
      bursts.push({ ...b, copyRate: copy.rate, ratio: b.rate / copy.rate });
    }
    const mid = medianRound(bursts);
    const { results, wallSec, doorSec, cores } = mid;
    const resultsPerSec = median(bursts.map((b) => b.rate));
    const ratio = median(bursts.map((b) => b.ratio));
    const reqMs = summarize(bursts.flatMap((b) => b.latencies));
    const ackToStoredMs = summarize(bursts.flatMap((b) => b.delays));
    ctx.log(
      `${variant.label}: ${thousands(results)} results, committed after the first request at ` +
        bursts
          .map(
            (b) =>
              `${thousands(b.rate)} results/s / COPY ${thousands(b.copyRate)} rows/s = ${b.ratio.toFixed(3)}`,
          )
          .join('; ') +
        ` (median ratio ${ratio.toFixed(3)}; its 202s ` +
        `all given after ${doorSec.toFixed(2)} s); 202 → stored p50 ${ackToStoredMs.p50.toFixed(0)} ms, ` +
        `p99 ${ackToStoredMs.p99.toFixed(0)} ms`,
    );

    // Without a backlog: one batch at a time into a run of its own, the next once the previous is stored.
    const singleUuid = randomUUID();
    await api(service, token, 'POST', base, { uuid: singleUuid, name: 'bench V2 single' }, 202);
    const single = [];
    for (const items of chunk(
      makeResults(SINGLE_BATCHES * BATCH, `single${variant.key}`, { uuids: true }),
      BATCH,
    )) {
      const watch = [items[0].uuid, items[items.length - 1].uuid];
      await api(service, token, 'POST', `${base}/${singleUuid}/results`, { results: items }, 202);
      const acked = performance.now();
      const deadline = acked + DRAIN_CAP_MS;
      for (;;) {
        const { rows } = await db.query(`SELECT count(*)::int AS n FROM (${SEEN_UUIDS}) seen`, [
          project.id,
          watch,
        ]);
        if (rows[0].n === watch.length) {
          single.push(performance.now() - acked);
          break;
        }
        if (performance.now() > deadline) {
          throw new Error(
            `${variant.label}: a single batch was not stored ${DRAIN_CAP_MS / 1000} s after its 202`,
          );
        }
        await new Promise((resolve) => setTimeout(resolve, SINGLE_POLL_MS));
      }
    }
    const singleAckToStoredMs = summarize(single);
    ctx.log(
      `${variant.label}: one batch at a time, 202 → stored p50 ${singleAckToStoredMs.p50.toFixed(0)} ms, ` +
        `max ${singleAckToStoredMs.max.toFixed(0)} ms (${single.length} batches)`,
    );
    return {
      queue: variant.key,
      ...(variant.queue ? { amqpQueue: variant.queue } : {}),
      results,
      wallSec,
      resultsPerSec,
      doorSec,
      doorResultsPerSec: results / doorSec,
      ratio,
      rounds: bursts.map((b) => ({
        results: b.results,
        wallSec: b.wallSec,
        resultsPerSec: b.rate,
        copyRate: b.copyRate,
        ratio: b.ratio,
      })),
      requestMs: reqMs,
      ackToStoredMs,
      singleAckToStoredMs,
      cpu: cores,
      phase: {
        label: `${variant.label}, until committed`,
        rows: results,
        wallSec,
        rate: mid.rate,
        ratio,
        reqMs,
        cpu: cores,
        wal: mid.wal,
      },
    };
  } finally {
    await db.end();
  }
}

async function waitForCount(db, projectId, runUuid, count, timeoutMs, what) {
  const deadline = performance.now() + timeoutMs;
  let last;
  while (performance.now() < deadline) {
    const { rows } = await db.query('SELECT count_total FROM runs WHERE project_id = $1 AND uuid = $2', [
      projectId,
      runUuid,
    ]);
    last = rows[0]?.count_total;
    if (last >= count) {
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`${what}: ${last ?? 'no run'} of ${count} results stored after ${timeoutMs / 1000} s`);
}

// ---------------------------------------------------------------------------------------------------------
// RabbitMQ

async function rabbitAvailable() {
  let amqp;
  try {
    amqp = (await import('amqplib')).default;
  } catch {
    return { ok: false, reason: 'amqplib is not installed' };
  }
  try {
    const connection = await amqp.connect(AMQP_URL, { timeout: 3_000 });
    await connection.close();
    return { ok: true };
  } catch (error) {
    return { ok: false, reason: `no broker at ${AMQP_URL.replace(/\/\/[^@]*@/, '//')}: ${error.message}` };
  }
}

async function deleteQueues(queues) {
  for (const queue of queues) {
    try {
      await run_('rabbitmqctl', ['delete_queue', queue], { timeout: 30_000 });
    } catch (error) {
      // Not there (never declared) is fine; anything else is worth a line.
      if (!/not found|NOT_FOUND|does not exist/i.test(`${error.stderr ?? ''}${error.stdout ?? ''}`)) {
        console.error(`bench: rabbitmqctl delete_queue ${queue} failed: ${error.stderr || error.message}`);
      }
    }
  }
}
