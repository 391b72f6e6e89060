// GET /api/projects/{id}/tests on a project of 51,000 tests (each with results in 3 runs): the first page, a deep
// page by number (OFFSET) and the same deep page by the previous page's nextCursor, one request at a time. Before
// the page was chosen ahead of its joins to the results, a deep page took 1.3-1.9 s and grew with the number of
// tests; the query as it was is timed too, straight on PostgreSQL, for the comparison.
import pg from 'pg';
import { fmt } from '../lib/report.mjs';
import { summarize } from '../lib/stats.mjs';

export const name = 'tests-paging';
export const title = 'Latency: GET /api/projects/{id}/tests on 51,000 tests, first page vs a deep page';

const TESTS = 51_000;
const RUNS = 3;
const SIZE = 20;
const DEEP_PAGE = Math.floor(TESTS / SIZE) - 1;
const SAMPLES = 15;
const WARMUP = 3;
const TARGET_MS = 1000;

/** The list's query before this change: last status and flakiness joined for every test the OFFSET skips. */
const OLD_SQL = `
  SELECT t.id, t.suite, t.name, l.status AS "lastStatus", COALESCE(f.flaky, false) AS "flakyNow"
    FROM test_cases t
    LEFT JOIN LATERAL (SELECT status FROM results WHERE test_id = t.id ORDER BY id DESC LIMIT 1) l ON true
    LEFT JOIN LATERAL (
      SELECT bool_or(passed AND failed) OR bool_or(retried_pass) AS flaky FROM (
        SELECT bool_or(r.status = 'PASSED') AS passed, bool_or(r.status IN ('FAILED', 'BROKEN')) AS failed,
               bool_or(r.status = 'PASSED' AND r.retry > 0) AS retried_pass
          FROM (SELECT * FROM results WHERE test_id = t.id ORDER BY id DESC LIMIT 10) r
          JOIN runs ru ON ru.id = r.run_id
         GROUP BY COALESCE(ru.attributes->>'commit', '')
      ) per_revision
    ) f ON true
   WHERE t.project_id = $1
   ORDER BY t.suite ASC, t.name ASC, t.id
   LIMIT $2 OFFSET $3`;

export async function run(ctx) {
  const service = await ctx.service();
  const token = await service.login();
  const api = async (path, init = {}) => {
    const res = await fetch(`${service.url}${path}`, {
      ...init,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...init.headers },
    });
    const body = await res.json();
    if (!res.ok) {
      throw new Error(
        `${init.method ?? 'GET'} ${path} answered ${res.status}: ${JSON.stringify(body).slice(0, 300)}`,
      );
    }
    return body;
  };
  const { id: projectId } = await api('/api/projects', {
    method: 'POST',
    body: JSON.stringify({ key: `PAGING${Date.now() % 100000}`, name: 'Tests paging bench' }),
  });

  ctx.log(`storing ${TESTS.toLocaleString('en')} tests with ${RUNS} runs of results (SQL)…`);
  const db = new pg.Client({ connectionString: service.db.url });
  await db.connect();
  let oldMs;
  try {
    await db.query(
      `INSERT INTO test_cases (project_id, identity, suite, name)
         SELECT $1::bigint, md5($1::bigint || ':' || g)::uuid, 'com.example.Suite' || (g % 400), 'test number ' || g
           FROM generate_series(1, $2::int) g`,
      [projectId, TESTS],
    );
    for (let r = 1; r <= RUNS; r++) {
      const {
        rows: [{ id: runId }],
      } = await db.query(
        `INSERT INTO runs (project_id, name, status, started_at, finished_at, count_total)
           VALUES ($1, $2, 'FINISHED', now(), now(), $3) RETURNING id`,
        [projectId, `bench ${r}`, TESTS],
      );
      await db.query(
        `INSERT INTO results (run_id, project_id, test_id, name, suite, status)
           SELECT $1, $2, t.id, t.name, t.suite, CASE WHEN (t.id + $3) % 9 = 0 THEN 'FAILED' ELSE 'PASSED' END
             FROM test_cases t WHERE t.project_id = $2`,
        [runId, projectId, r],
      );
    }
    await db.query('VACUUM ANALYZE test_cases');
    await db.query('VACUUM ANALYZE results');
    await db.query('ANALYZE runs');
    oldMs = await timed(() => db.query(OLD_SQL, [projectId, SIZE, DEEP_PAGE * SIZE]));
  } finally {
    await db.end();
  }

  const path = `/api/projects/${projectId}/tests?size=${SIZE}`;
  const { nextCursor } = await api(`${path}&page=${DEEP_PAGE - 1}`);
  const first = await timed(() => api(`${path}&page=0`));
  const deep = await timed(() => api(`${path}&page=${DEEP_PAGE}`));
  const cursor = await timed(() => api(`${path}&cursor=${nextCursor}`));
  const ratio = deep.p50 / first.p50;

  const row = (label, s) => [label, s.count, fmt(s.mean, 1), fmt(s.p50, 1), fmt(s.p90, 1), fmt(s.max, 1)];
  return {
    tables: [
      {
        title: `latency in ms, ${TESTS.toLocaleString('en')} tests, size ${SIZE}; deep page = page ${DEEP_PAGE} (of ${DEEP_PAGE + 1})`,
        headers: ['what', 'n', 'mean', 'p50', 'p90', 'max'],
        rows: [
          row('first page (page=0)', first),
          row(`deep page (page=${DEEP_PAGE})`, deep),
          row('same deep page by cursor', cursor),
          row('the query before this change, deep page (SQL alone)', oldMs),
        ],
      },
    ],
    summary: [
      { metric: 'tests list, first page p50', value: first.p50, unit: 'ms', digits: 1 },
      {
        metric: `tests list, deep page p50 (page ${DEEP_PAGE})`,
        value: deep.p50,
        unit: 'ms',
        digits: 1,
        target: `< ${TARGET_MS}`,
        ok: deep.p50 < TARGET_MS,
      },
      { metric: 'tests list, deep page ÷ first page (p50)', value: ratio, unit: '×', digits: 2 },
      { metric: 'tests list, deep page by cursor p50', value: cursor.p50, unit: 'ms', digits: 1 },
      { metric: 'the query before this change, deep page p50', value: oldMs.p50, unit: 'ms', digits: 1 },
    ],
    data: {
      tests: TESTS,
      size: SIZE,
      deepPage: DEEP_PAGE,
      firstMs: first,
      deepMs: deep,
      cursorMs: cursor,
      oldQueryMs: oldMs,
      ratio,
    },
  };
}

async function timed(call) {
  for (let i = 0; i < WARMUP; i++) {
    await call();
  }
  const samples = [];
  for (let i = 0; i < SAMPLES; i++) {
    const started = performance.now();
    await call();
    samples.push(performance.now() - started);
  }
  return summarize(samples);
}
