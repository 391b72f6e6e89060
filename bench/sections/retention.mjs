// Retention (issue #40): the cleanup of 2,000,000 results, and ingest while it runs.
//   1. COPY: the 2,000,000 results (100 runs of the same 20,000 tests, as a nightly job leaves them) COPYed into
//      `results` itself, run by run, with its indexes: the cheapest way those rows get in. Its rate is the yardstick.
//   2. The cleanup: the project's policy keeps its newest run; one pass (POST /api/projects/{id}/retention/run,
//      which answers once every result is deleted) removes the 100 runs: batches of SVC_RETENTION_BATCH results a
//      transaction with SVC_RETENTION_PAUSE_MS between them, as the scheduled job does. Its rate / the COPY's rate.
//   3. ingest.v1_rerun while the cleanup runs / without: V1 batches of 1000 results of tests a project already has
//      (another project), measured alone (after a round unmeasured), then during the cleanup, then alone again (the
//      two alone averaged).
//   4. The database's size, and the results table's and its indexes', before the load, after it, after the
//      cleanup, and after the next autovacuum of results (waited for; VACUUM run by hand if it does not come); the
//      bloat (pgstattuple: dead and free space of the heap, leaf density of each index) after the cleanup and after
//      the vacuum; and how much the table grows when the same 2,000,000 rows are COPYed again (space reused).
//   The V1 rounds write into results too (their rows are among the live ones counted).
//   BENCH_RETENTION_PAUSE_MS, BENCH_RETENTION_PAUSE_PERCENT and BENCH_RETENTION_BATCH run the section on a service of
//   its own with those settings (SVC_RETENTION_PAUSE_MS, …), to compare.
//   The failing tenth of the results have their failure signatures as the service's writer leaves them
//   (signatures.writer.ts), seeded with SQL after the COPY (unmeasured): SIGNATURES keys (each test fails with one of
//   them for 10 runs, then another; two tests share each in a run), failure_results for each failing result, the
//   link rows by test and by run with their counts, and each signature's occurrences, tests, runs, first and last
//   seen. The kept run has failing results of its own (a part of the signatures stays). So the cleanup pays for the
//   recount of signatures (signatures-recount.ts) as the service's does; after it, the signatures left are checked
//   against what their failure_results give.
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { failureKey } from '../../dist/src/triage/failure-signature.js';
import { fmt, thousands } from '../lib/report.mjs';
import { api, chunk, copyField, drive, makeResults } from './ingest.mjs';

export const name = 'retention';
export const title =
  'Retention: cleanup of 2,000,000 results against a COPY of them; V1 rerun during the cleanup';
export const CLEANUP_TARGET = 0.5;
export const INGEST_TARGET = 0.7;

const TESTS = 20_000;
const RUNS = Number(process.env.BENCH_RETENTION_RUNS ?? 100); // × TESTS results
const V1_RESULTS = 30_000;
const V1_CLIENTS = 2;
const AUTOVACUUM_WAIT_MS = Number(process.env.BENCH_RETENTION_AUTOVACUUM_WAIT_MS ?? 180_000);
/** BENCH_RETENTION_SIGNATURES=0 leaves the signatures out (the cleanup without the recount's work, to compare). */
const SEED_SIGNATURES = process.env.BENCH_RETENTION_SIGNATURES !== '0';
/** Distinct failure signatures of the project (keys). */
const SIGNATURES = 2_000;
/** Runs in a row a failing test keeps its signature for. */
const EPOCH_RUNS = 10;

/** The i-th test (0-based) fails in every run when i % 10 === 7: a tenth. */
const fails = (i) => i % 10 === 7;
/** The signature (0-based) of the i-th test's failure in the r-th run (0-based; the kept run is RUNS). */
const signatureOf = (i, r) =>
  (Math.floor(Math.floor(i / 10) / 2) + 131 * Math.floor(r / EPOCH_RUNS)) % SIGNATURES;
/** The same in SQL, of `i` and `r` columns. */
const SIGNATURE_OF_SQL = `((i / 10) / 2 + 131 * (r / ${EPOCH_RUNS})) % ${SIGNATURES}`;
/** What the i-th test's failure in the r-th run says: its signature's words, numbers that differ every time. */
const messageOf = (i, r) =>
  `AssertionError: expected status 200 but was 500 in checkout${signatureOf(i, r)} (case ${i}, run ${r}, ${(i * 7919 + r) % 1000} ms)`;

export async function run(ctx) {
  // BENCH_RETENTION_PAUSE_MS, …: a service of its own with those settings (to compare).
  const variant = Object.fromEntries(
    [
      ['SVC_RETENTION_PAUSE_MS', process.env.BENCH_RETENTION_PAUSE_MS],
      ['SVC_RETENTION_PAUSE_PERCENT', process.env.BENCH_RETENTION_PAUSE_PERCENT],
      ['SVC_RETENTION_BATCH', process.env.BENCH_RETENTION_BATCH],
    ].filter(([, value]) => value !== undefined),
  );
  const service = Object.keys(variant).length
    ? await ctx.startServiceVariant('retention', variant)
    : await ctx.service();
  const token = await service.login();
  const db = new pg.Client({ connectionString: service.db.url });
  await db.connect();
  const total = RUNS * TESTS;
  const summary = [];
  const data = { runs: RUNS, testsPerRun: TESTS, results: total };
  try {
    const sizes = [];
    const size = async (label) => {
      const [row] = (
        await db.query(
          `SELECT pg_database_size(current_database()) AS db, pg_relation_size('results') AS heap,
                  pg_indexes_size('results') AS indexes, n_live_tup, n_dead_tup, last_autovacuum, autovacuum_count
             FROM pg_stat_user_tables WHERE relname = 'results'`,
        )
      ).rows;
      const entry = {
        label,
        db: Number(row.db),
        heap: Number(row.heap),
        indexes: Number(row.indexes),
        live: Number(row.n_live_tup),
        dead: Number(row.n_dead_tup),
        autovacuums: Number(row.autovacuum_count),
      };
      sizes.push(entry);
      return entry;
    };
    const bloat = async (label) => {
      try {
        await db.query('CREATE EXTENSION IF NOT EXISTS pgstattuple');
        const heap = (await db.query(`SELECT * FROM pgstattuple('results')`)).rows[0];
        const indexes = (
          await db.query(
            `SELECT c.relname AS name, (pgstatindex(c.oid::regclass)).avg_leaf_density AS density, pg_relation_size(c.oid) AS bytes
               FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE i.indrelid = 'results'::regclass ORDER BY c.relname`,
          )
        ).rows;
        return {
          label,
          heapBytes: Number(heap.table_len),
          livePct: Number(heap.tuple_percent),
          deadPct: Number(heap.dead_tuple_percent),
          freePct: Number(heap.free_percent),
          indexes: indexes.map((i) => ({ name: i.name, density: Number(i.density), bytes: Number(i.bytes) })),
        };
      } catch (error) {
        return { label, error: String(error.message) };
      }
    };
    const bloats = [];
    await db.query('ANALYZE results');
    await size('before the load');

    // ---- the project: 20,000 tests, 100 finished runs of them (oldest first), then one newer run that is kept.
    const project = await api(
      service,
      token,
      'POST',
      '/api/projects',
      { key: `BENCH_RET_${Date.now() % 1e6}`, name: 'bench retention' },
      201,
    );
    await db.query(
      `INSERT INTO test_cases (project_id, identity, suite, name)
         SELECT $1::bigint, md5($3 || '/' || i)::uuid, 'com.example.Suite' || (i / 50), 'case ' || i
           FROM generate_series(1, $2::int) i`,
      [project.id, TESTS, String(project.id)],
    );
    const testIds = (
      await db.query('SELECT id FROM test_cases WHERE project_id = $1 ORDER BY id', [project.id])
    ).rows.map((r) => String(r.id));
    const runIds = [];
    for (let i = 0; i < RUNS; i++) {
      const startedAt = new Date(Date.now() - (RUNS + 1 - i) * 3_600_000).toISOString();
      const created = await api(
        service,
        token,
        'POST',
        `/api/projects/${project.id}/runs`,
        { name: `nightly #${i + 1}`, startedAt },
        201,
      );
      runIds.push(created.id);
    }

    // ---- 1. COPY of the rows into results, run by run (text format, 64 KiB chunks), timed.
    ctx.log(`COPY of ${thousands(total)} results into results (${RUNS} runs × ${thousands(TESTS)} tests)…`);
    const copyStarted = performance.now();
    for (const [r, runId] of runIds.entries()) {
      await copyRun(db, project.id, runId, testIds, r);
    }
    const copySec = (performance.now() - copyStarted) / 1000;
    await db.query(
      `UPDATE runs SET status = 'FINISHED', finished_at = started_at + interval '10 minutes', count_total = $2,
              count_passed = $2 - $2 / 10, count_failed = $2 / 10, count_attempts = $2
        WHERE id = ANY($1::bigint[])`,
      [runIds, TESTS],
    );
    const kept = await api(
      service,
      token,
      'POST',
      `/api/projects/${project.id}/runs`,
      { name: 'nightly #latest' },
      201,
    );
    const copyRate = total / copySec;
    ctx.log(`COPY: ${fmt(copySec, 1)} s, ${fmt(copyRate, 0)} rows/s`);
    // The kept run's results (not timed), failing ones among them, then the signatures of every failing result.
    await copyRun(db, project.id, kept.id, testIds, RUNS);
    const seedStarted = performance.now();
    if (SEED_SIGNATURES) {
      ctx.log(
        `seeding the failure signatures of the ${thousands((RUNS + 1) * (TESTS / 10))} failing results (SQL)…`,
      );
      await seedSignatures(db, project.id, [...runIds, kept.id], testIds);
    } else {
      ctx.log('no failure signatures seeded (BENCH_RETENTION_SIGNATURES=0)');
    }
    const seeded = await checkSignatures(db, project.id);
    ctx.log(`seeded in ${fmt((performance.now() - seedStarted) / 1000, 1)} s: ${signatureLine(seeded)}`);
    data.seeded = seeded;
    await api(service, token, 'POST', `/api/runs/${kept.id}/finish`, {}, 200);
    await db.query('ANALYZE results');
    const loaded = await size('after the load');

    // ---- 3a. V1 rerun alone (another project, a previous run of the same tests first).
    const v1 = await prepareV1(service, token);
    // A round first, unmeasured: the first ran at a third to a half of the rounds after it (a cold service and cache),
    // which made the cleanup look as if it sped V1 up (during / alone 1.2 to 1.6).
    await measureV1(service, token, v1);
    const alone1 = await measureV1(service, token, v1);
    ctx.log(`V1 rerun alone: ${fmt(alone1.rate, 0)} results/s`);

    // ---- 2. The cleanup, with V1 reruns running beside it (3b).
    await api(
      service,
      token,
      'PATCH',
      `/api/projects/${project.id}/settings`,
      { retention: { keepRuns: 1 } },
      200,
    );
    const preview = await api(
      service,
      token,
      'GET',
      `/api/projects/${project.id}/retention/preview`,
      undefined,
      200,
    );
    ctx.log(`cleanup of ${thousands(preview.results)} results in ${preview.runs} runs…`);
    const cleanupStarted = performance.now();
    const cleanup = api(
      service,
      token,
      'POST',
      `/api/projects/${project.id}/retention/run`,
      undefined,
      200,
    ).then((r) => ({
      ...r,
      sec: (performance.now() - cleanupStarted) / 1000,
    }));
    let cleanupDone = false;
    void cleanup.then(
      () => (cleanupDone = true),
      () => (cleanupDone = true),
    );
    // V1 rounds while the cleanup runs: the rounds that ended before it did count.
    const during = [];
    while (!cleanupDone) {
      const round = await measureV1(service, token, v1);
      if (!cleanupDone) {
        during.push(round);
      }
    }
    const pass = await cleanup;
    const cleanupRate = pass.resultsDeleted / pass.sec;
    const afterCleanup = await size('after the cleanup');
    bloats.push(await bloat('after the cleanup'));
    ctx.log(
      `cleanup: ${fmt(pass.sec, 1)} s, ${fmt(cleanupRate, 0)} results/s (${during.length} V1 rounds during it)`,
    );
    // The signatures left: their counts, link rows, first and last seen as their failure_results give them.
    const checked = await checkSignatures(db, project.id, runIds);
    data.signaturesAfter = checked;
    ctx.log(`signatures after the cleanup: ${signatureLine(checked)}`);
    const alone2 = await measureV1(service, token, v1);
    const aloneRate = (alone1.rate + alone2.rate) / 2;
    const duringRate = during.length ? during.reduce((s, r) => s + r.rate, 0) / during.length : null;

    // ---- 4. The next autovacuum of results.
    ctx.log(`waiting up to ${AUTOVACUUM_WAIT_MS / 1000} s for the next autovacuum of results…`);
    const deadline = Date.now() + AUTOVACUUM_WAIT_MS;
    let vacuumed = 'autovacuum';
    for (;;) {
      const polled = await size('(poll)');
      sizes.pop();
      if (polled.autovacuums > afterCleanup.autovacuums) {
        break;
      }
      if (Date.now() > deadline) {
        vacuumed = 'VACUUM by hand (no autovacuum in time)';
        await db.query('VACUUM results');
        break;
      }
      await new Promise((r) => setTimeout(r, 2000));
    }
    await db.query('ANALYZE results');
    const afterVacuum = await size(`after the next ${vacuumed}`);
    bloats.push(await bloat(`after the ${vacuumed}`));
    // The space freed, reused: the same rows COPYed again into as many new runs.
    ctx.log('COPY of the same rows again (space reuse)…');
    for (let i = 0; i < RUNS; i++) {
      const again = await api(
        service,
        token,
        'POST',
        `/api/projects/${project.id}/runs`,
        { name: `again #${i + 1}` },
        201,
      );
      await copyRun(db, project.id, again.id, testIds, i);
    }
    await db.query('ANALYZE results');
    const reloaded = await size('after COPYing the same rows again');
    bloats.push(await bloat('after COPYing the same rows again'));
    data.bloat = bloats;
    data.sizes = sizes;
    data.copy = { sec: copySec, rowsPerSec: copyRate };
    data.cleanup = { ...pass, rowsPerSec: cleanupRate, ratio: cleanupRate / copyRate };
    data.v1 = { alone: [alone1, alone2], during, ratio: duringRate === null ? null : duringRate / aloneRate };
    const ratioLine = (metric, value, target) => ({
      metric,
      value,
      unit: '',
      digits: 3,
      target: `≥ ${target}`,
      ok: value !== null && value >= target,
    });
    summary.push(
      {
        metric: `COPY of ${thousands(total)} results into results`,
        value: copyRate,
        unit: 'rows/s',
        digits: 0,
      },
      { metric: 'cleanup (one pass, batches + pauses)', value: cleanupRate, unit: 'results/s', digits: 0 },
      ratioLine('ratio cleanup / COPY', cleanupRate / copyRate, CLEANUP_TARGET),
      {
        metric: 'ingest.v1_rerun alone (mean of before and after)',
        value: aloneRate,
        unit: 'results/s',
        digits: 0,
      },
      { metric: 'ingest.v1_rerun during the cleanup', value: duringRate, unit: 'results/s', digits: 0 },
      ratioLine(
        'ratio V1 rerun during / alone',
        duringRate === null ? null : duringRate / aloneRate,
        INGEST_TARGET,
      ),
      {
        metric: `failure signatures after the cleanup inconsistent with failure_results (of ${thousands(checked.signatures)} left, ${thousands(seeded.signatures)} seeded)`,
        value: checked.inconsistent,
        unit: '',
        digits: 0,
        target: '= 0',
        ok: checked.inconsistent === 0,
      },
      { metric: 'database size after the load', value: loaded.db / 2 ** 20, unit: 'MiB', digits: 0 },
      { metric: 'database size after the cleanup', value: afterCleanup.db / 2 ** 20, unit: 'MiB', digits: 0 },
      {
        metric: `database size after the next ${vacuumed}`,
        value: afterVacuum.db / 2 ** 20,
        unit: 'MiB',
        digits: 0,
      },
      {
        metric: 'results heap + indexes growth when the same rows are COPYed again',
        value: (reloaded.heap + reloaded.indexes - afterVacuum.heap - afterVacuum.indexes) / 2 ** 20,
        unit: 'MiB',
        digits: 0,
      },
      {
        metric: '… the first COPY of them took',
        value: (loaded.heap + loaded.indexes - sizes[0].heap - sizes[0].indexes) / 2 ** 20,
        unit: 'MiB',
        digits: 0,
      },
    );
    const tables = [
      {
        title: 'results table and indexes (MiB), live and dead rows (statistics)',
        headers: ['when', 'database', 'results heap', 'results indexes', 'live rows', 'dead rows'],
        rows: sizes.map((s) => [
          s.label,
          fmt(s.db / 2 ** 20, 0),
          fmt(s.heap / 2 ** 20, 0),
          fmt(s.indexes / 2 ** 20, 0),
          thousands(s.live),
          thousands(s.dead),
        ]),
      },
      {
        title:
          'bloat of results (pgstattuple): heap live / dead / free %, and each index: leaf density % (MiB)',
        headers: ['when', 'heap MiB', 'live %', 'dead %', 'free %', 'indexes'],
        rows: bloats.map((b) =>
          b.error
            ? [b.label, b.error, null, null, null, null]
            : [
                b.label,
                fmt(b.heapBytes / 2 ** 20, 0),
                fmt(b.livePct, 1),
                fmt(b.deadPct, 1),
                fmt(b.freePct, 1),
                b.indexes
                  .map((i) => `${i.name} ${fmt(i.density, 0)}% (${fmt(i.bytes / 2 ** 20, 0)})`)
                  .join('; '),
              ],
        ),
      },
      {
        title: 'phases',
        headers: ['what', 'rows', 'wall s', 'rows/s'],
        rows: [
          ['COPY into results', total, fmt(copySec, 1), fmt(copyRate, 0)],
          ['cleanup pass', pass.resultsDeleted, fmt(pass.sec, 1), fmt(cleanupRate, 0)],
          ...[alone1, ...during, alone2].map((r, i) => [
            i === 0
              ? 'V1 rerun alone (before)'
              : i === during.length + 1
                ? 'V1 rerun alone (after)'
                : 'V1 rerun during the cleanup',
            r.results,
            fmt(r.sec, 1),
            fmt(r.rate, 0),
          ]),
        ],
      },
    ];
    return { tables, summary, data };
  } finally {
    await db.end();
  }
}

/** COPY of the r-th run's rows: each test once, a tenth FAILED with a short message (messageOf). */
async function copyRun(db, projectId, runId, testIds, r) {
  const lines = [];
  let chunkText = '';
  for (let i = 0; i < testIds.length; i++) {
    const failed = fails(i);
    chunkText +=
      [
        runId,
        projectId,
        testIds[i],
        `case ${i + 1}`,
        `com.example.Suite${Math.floor((i + 1) / 50)}`,
        failed ? 'FAILED' : 'PASSED',
        (i * 7919) % 2000,
        failed ? messageOf(i, r) : null,
      ]
        .map(copyField)
        .join('\t') + '\n';
    if (chunkText.length >= 65_536) {
      lines.push(Buffer.from(chunkText));
      chunkText = '';
    }
  }
  if (chunkText) {
    lines.push(Buffer.from(chunkText));
  }
  await pipeline(
    Readable.from(lines),
    db.query(
      copyFrom(
        'COPY results (run_id, project_id, test_id, name, suite, status, duration_ms, message) FROM STDIN',
      ),
    ),
  );
}

/** A project for ingest.v1_rerun: the tests sent once (unmeasured), so each round reruns known tests. */
async function prepareV1(service, token) {
  const project = await api(
    service,
    token,
    'POST',
    '/api/projects',
    { key: `BENCH_RETV1_${Date.now() % 1e6}`, name: 'bench v1' },
    201,
  );
  const bodies = chunk(makeResults(V1_RESULTS, 'retv1'), 1000).map((items) =>
    Buffer.from(JSON.stringify({ results: items })),
  );
  const previous = await api(
    service,
    token,
    'POST',
    `/api/projects/${project.id}/runs`,
    { name: 'previous' },
    201,
  );
  await drive({
    service,
    token,
    bodies,
    path: () => `/api/runs/${previous.id}/results`,
    expect: 201,
    clients: V1_CLIENTS,
  });
  return { project, bodies };
}

/** One V1 rerun round: a new run, the batches from V1_CLIENTS clients; results/s over the wall time. */
async function measureV1(service, token, { project, bodies }) {
  const run = await api(service, token, 'POST', `/api/projects/${project.id}/runs`, { name: 'rerun' }, 201);
  const started = performance.now();
  const { sent } = await drive({
    service,
    token,
    bodies,
    path: () => `/api/runs/${run.id}/results`,
    expect: 201,
    clients: V1_CLIENTS,
  });
  const sec = (performance.now() - started) / 1000;
  const results = sent * 1000;
  return { results, sec, rate: results / sec };
}

/**
 * The failure signatures of the project's failing results, as signatures.writer.ts would have stored them run after
 * run (`runIds` in the order they started): the keys (failureKey of their messages, as the service computes them),
 * each with the message of its first failure as sample; failure_results for every failing result; the link rows by
 * test and by run with their counts (and the run's start); and each signature's occurrences, tests, runs, first and
 * last run and seen. Then the tables are vacuumed and analysed, as autovacuum would have left them.
 */
async function seedSignatures(db, projectId, runIds, testIds) {
  const keys = new Array(SIGNATURES);
  for (let r = 0; r < runIds.length; r++) {
    for (let i = 0; i < testIds.length; i++) {
      const s = signatureOf(i, r);
      if (fails(i) && !keys[s]) {
        const message = messageOf(i, r);
        keys[s] = { key: failureKey(message, null), sample: message };
      }
    }
  }
  const used = keys.map((k, s) => ({ ...k, s })).filter((k) => k.key);
  if (new Set(used.map((k) => k.key)).size !== used.length) {
    throw new Error('the seeded signatures do not have distinct keys');
  }
  await db.query(
    `CREATE TEMPORARY TABLE bench_runs AS
       SELECT u.id AS run_id, (u.r - 1)::int AS r FROM unnest($1::bigint[]) WITH ORDINALITY AS u(id, r)`,
    [runIds],
  );
  await db.query(
    `CREATE TEMPORARY TABLE bench_tests AS
       SELECT u.id AS test_id, (u.i - 1)::int AS i FROM unnest($1::bigint[]) WITH ORDINALITY AS u(id, i)`,
    [testIds],
  );
  // New signatures in key order, as the writer inserts them.
  await db.query(
    `INSERT INTO failure_signatures
            (project_id, key, sample_message, first_run_id, first_seen_at, last_run_id, last_seen_at, occurrences)
     SELECT $1, k.key, k.sample, 0, now(), 0, now(), 0
       FROM unnest($2::text[], $3::text[]) AS k(key, sample) ORDER BY k.key`,
    [projectId, used.map((k) => k.key), used.map((k) => k.sample)],
  );
  await db.query(
    `CREATE TEMPORARY TABLE bench_signatures AS
       SELECT s.id, k.s FROM unnest($2::text[], $3::int[]) AS k(key, s)
         JOIN failure_signatures s ON s.project_id = $1 AND s.key = k.key`,
    [projectId, used.map((k) => k.key), used.map((k) => k.s)],
  );
  for (const table of ['bench_runs', 'bench_tests', 'bench_signatures']) {
    await db.query(`ANALYZE ${table}`);
  }
  await db.query(
    `INSERT INTO failure_results (run_id, result_id, signature_id)
     SELECT x.run_id, x.id, g.id FROM (
       SELECT res.run_id, res.id, ${SIGNATURE_OF_SQL} AS s
         FROM results res JOIN bench_runs USING (run_id) JOIN bench_tests USING (test_id)
        WHERE res.project_id = $1 AND res.status = 'FAILED') x
       JOIN bench_signatures g ON g.s = x.s`,
    [projectId],
  );
  await db.query(
    `INSERT INTO failure_signature_runs (signature_id, run_id, occurrences, started_at)
     SELECT f.signature_id, f.run_id, count(*), min(ru.started_at)
       FROM failure_results f JOIN bench_runs USING (run_id) JOIN runs ru ON ru.id = f.run_id
      GROUP BY 1, 2`,
  );
  await db.query(
    `INSERT INTO failure_signature_tests (signature_id, test_id, occurrences)
     SELECT f.signature_id, res.test_id, count(*)
       FROM failure_results f JOIN bench_runs USING (run_id)
       JOIN results res ON res.run_id = f.run_id AND res.status = 'FAILED' AND res.id = f.result_id
      GROUP BY 1, 2`,
  );
  await db.query(
    `UPDATE failure_signatures s
        SET occurrences = c.occurrences, runs = c.runs, first_run_id = c.first_run, first_seen_at = c.first_at,
            last_run_id = c.last_run, last_seen_at = c.last_at,
            tests = (SELECT count(*) FROM failure_signature_tests t WHERE t.signature_id = s.id)
       FROM (SELECT signature_id, sum(occurrences) AS occurrences, count(*) AS runs,
                    (array_agg(run_id ORDER BY started_at, run_id))[1] AS first_run, min(started_at) AS first_at,
                    (array_agg(run_id ORDER BY started_at DESC, run_id DESC))[1] AS last_run, max(started_at) AS last_at
               FROM failure_signature_runs WHERE signature_id IN (SELECT id FROM bench_signatures) GROUP BY 1) c
      WHERE s.id = c.signature_id`,
  );
  await db.query('DROP TABLE bench_runs, bench_tests, bench_signatures');
  for (const table of [
    'failure_results',
    'failure_signatures',
    'failure_signature_runs',
    'failure_signature_tests',
  ]) {
    await db.query(`VACUUM ANALYZE ${table}`);
  }
}

/**
 * The project's signatures against their failure_results (by their results and runs): each one's occurrences,
 * tests, runs, first and last seen, and every link row by test and by run, as those rows give them; a signature
 * without failure_results left should be gone. `purged`: runs whose failure_results should be gone too.
 */
async function checkSignatures(db, projectId, purged = []) {
  const [row] = (
    await db.query(
      `WITH fr AS (
         SELECT f.signature_id, f.run_id, res.test_id, ru.started_at
           FROM failure_results f JOIN runs ru ON ru.id = f.run_id
           JOIN results res ON res.run_id = f.run_id AND res.status IN ('FAILED', 'BROKEN') AND res.id = f.result_id
          WHERE ru.project_id = $1),
       sig AS (SELECT * FROM failure_signatures WHERE project_id = $1),
       e AS (
         SELECT signature_id, count(*) AS occurrences, count(DISTINCT test_id) AS tests, count(DISTINCT run_id) AS runs,
                min(started_at) AS first_at, max(started_at) AS last_at
           FROM fr GROUP BY 1),
       bad AS (
         SELECT coalesce(s.id, e.signature_id) AS id FROM sig s FULL JOIN e ON e.signature_id = s.id
          WHERE s.id IS NULL OR e.signature_id IS NULL OR s.occurrences <> e.occurrences OR s.tests <> e.tests
             OR s.runs <> e.runs OR s.first_seen_at <> e.first_at OR s.last_seen_at <> e.last_at
         UNION
         SELECT coalesce(l.signature_id, t.signature_id) FROM
           (SELECT * FROM failure_signature_tests WHERE signature_id IN (SELECT id FROM sig)) l
           FULL JOIN (SELECT signature_id, test_id, count(*) AS n FROM fr GROUP BY 1, 2) t
             ON t.signature_id = l.signature_id AND t.test_id = l.test_id
          WHERE l.occurrences IS DISTINCT FROM t.n
         UNION
         SELECT coalesce(l.signature_id, t.signature_id) FROM
           (SELECT * FROM failure_signature_runs WHERE signature_id IN (SELECT id FROM sig)) l
           FULL JOIN (SELECT signature_id, run_id, count(*) AS n, min(started_at) AS started_at FROM fr GROUP BY 1, 2) t
             ON t.signature_id = l.signature_id AND t.run_id = l.run_id
          WHERE l.occurrences IS DISTINCT FROM t.n OR l.started_at IS DISTINCT FROM t.started_at)
       SELECT (SELECT count(*) FROM sig)::int AS signatures,
              (SELECT coalesce(sum(occurrences), 0) FROM sig)::bigint AS occurrences,
              (SELECT count(*) FROM fr)::int AS failure_results,
              (SELECT count(*) FROM failure_signature_tests WHERE signature_id IN (SELECT id FROM sig))::int AS test_links,
              (SELECT count(*) FROM failure_signature_runs WHERE signature_id IN (SELECT id FROM sig))::int AS run_links,
              (SELECT count(*) FROM bad)::int AS inconsistent,
              (SELECT count(*) FROM failure_results WHERE run_id = ANY($2::bigint[]))::int AS purged_left`,
      [projectId, purged],
    )
  ).rows;
  const out = Object.fromEntries(Object.entries(row).map(([k, v]) => [k, Number(v)]));
  // failure_results rows of purged runs left behind count against consistency too.
  out.inconsistent += out.purged_left;
  return out;
}

function signatureLine(c) {
  return (
    `${thousands(c.signatures)} signatures, ${thousands(c.occurrences)} occurrences, ` +
    `${thousands(c.failure_results)} failure_results, ${thousands(c.test_links)} test links, ` +
    `${thousands(c.run_links)} run links; ${c.inconsistent} inconsistent with failure_results` +
    (c.purged_left ? ` (${thousands(c.purged_left)} failure_results of purged runs left)` : '')
  );
}
