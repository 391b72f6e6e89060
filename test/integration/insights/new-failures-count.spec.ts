import { DataSource } from 'typeorm';
import { dataSourceOptions } from '../../../src/database/data-source-options.js';
import { CHANGES_SQL, NEW_FAILURES_SQL } from '../../../src/insights/changes.js';
import { createTestDatabase, TestDatabase } from '../../support/database.js';

const STATUSES = ['PASSED', 'FAILED', 'BROKEN', 'SKIPPED'] as const;
/** Other attempts' statuses (src/results/attempts.ts, STATUS_BITS): none, passed, failed, broken, skipped, all. */
const OTHERS = [0, 1, 2, 4, 8, 15];
const HEAD = 2001;
const BASE = 2000;

/**
 * A run's stored `newFailures` (storeNewFailures) counts what compare calls NEW_FAILURE (CHANGES_SQL), read from the
 * head run's failures alone: the two agree for every pair of outcomes a test can have in the two runs (each status
 * with each set of other attempts, or none), on one code revision and on two.
 */
describe('new failures: the count equals the changes', () => {
  let database: TestDatabase;
  let db: DataSource;

  beforeAll(async () => {
    database = await createTestDatabase();
    db = await new DataSource(dataSourceOptions(database.url, 2)).initialize();
    const outcomes: (readonly [string, number] | null)[] = [
      null,
      ...STATUSES.flatMap((s) => OTHERS.map((o) => [s, o] as const)),
    ];
    const rows: [number, number, string, number][] = [];
    let test = 0;
    for (const head of outcomes) {
      for (const base of outcomes) {
        test++;
        if (head) {
          rows.push([HEAD, test, head[0], head[1]]);
        }
        if (base) {
          rows.push([BASE, test, base[0], base[1]]);
        }
      }
    }
    await db.query(
      `INSERT INTO results (run_id, project_id, test_id, name, status, other_statuses)
       SELECT r, 1, t, 'test ' || t, s, o FROM unnest($1::bigint[], $2::bigint[], $3::text[], $4::smallint[]) AS x(r, t, s, o)`,
      [rows.map((r) => r[0]), rows.map((r) => r[1]), rows.map((r) => r[2]), rows.map((r) => r[3])],
    );
  }, 60_000);
  afterAll(async () => {
    await db?.destroy();
    await database?.drop();
  });

  it.each([true, false])('on one revision: %s', async (same) => {
    const [{ changes }] = await db.query(
      `SELECT count(*)::int AS changes FROM (${CHANGES_SQL}) c WHERE c.change = 'NEW_FAILURE'`,
      [HEAD, BASE, same],
    );
    const [{ count }] = await db.query(`SELECT count::int FROM (${NEW_FAILURES_SQL}) n`, [HEAD, BASE, same]);
    expect(changes).toBeGreaterThan(0);
    expect(count).toBe(changes);
  });
});
