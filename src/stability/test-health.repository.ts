import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import type { ResultStatus } from '../results/entities.js';
import type { HealthState, Quarantine, TestHealth, WindowEntry } from './flakiness.js';

/** A row of test_health as read (see migration TestHealth). */
interface HealthRow {
  test_id: string;
  w_run: string[];
  w_bits: number[];
  w_stream: string[];
  w_commit: string[];
  runs: number;
  flake_rate: number | null;
  flaky: boolean;
  last_status: ResultStatus | null;
  last_run_id: string | null;
  first_seen_at: Date;
  last_failed_at: Date | null;
  state: HealthState;
  q_since: Date | null;
  q_reason: string | null;
  q_auto: boolean | null;
  q_by_user_id: string | null;
  q_until: Date | null;
  q_passes: number;
  q_pass_run: string | null;
  released_run: string | null;
}

const HEALTH_COLUMNS =
  'test_id, w_run, w_bits, w_stream, w_commit, runs, flake_rate, flaky, last_status, last_run_id, first_seen_at, ' +
  'last_failed_at, state, q_since, q_reason, q_auto, q_by_user_id, q_until, q_passes, q_pass_run, released_run';

/** The record type of a row as JSON (json_to_recordset), in HEALTH_COLUMNS' order after project_id. */
const RECORD =
  'test_id bigint, project_id bigint, w_run bigint[], w_bits smallint[], w_stream bigint[], w_commit bigint[], ' +
  'runs integer, flake_rate double precision, flaky boolean, last_status varchar, last_run_id bigint, ' +
  'first_seen_at timestamptz, last_failed_at timestamptz, state varchar, q_since timestamptz, q_reason varchar, ' +
  'q_auto boolean, q_by_user_id bigint, q_until timestamptz, q_passes integer, q_pass_run bigint, released_run bigint';

const SET_ALL = HEALTH_COLUMNS.split(', ')
  .filter((c) => c !== 'test_id')
  .map((c) => `${c} = u.${c}`)
  .join(', ');

function toHealth(r: HealthRow): TestHealth {
  const entries: WindowEntry[] = r.w_run.map((run, i) => ({
    run: String(run),
    bits: r.w_bits[i],
    stream: String(r.w_stream[i]),
    commit: String(r.w_commit[i]),
  }));
  return {
    entries,
    runs: r.runs,
    flakeRate: r.flake_rate,
    flaky: r.flaky,
    lastStatus: r.last_status,
    lastRunId: r.last_run_id === null ? null : String(r.last_run_id),
    firstSeenAt: r.first_seen_at,
    lastFailedAt: r.last_failed_at,
    state: r.state,
    quarantine:
      r.q_since === null
        ? null
        : {
            since: r.q_since,
            reason: r.q_reason ?? '',
            auto: r.q_auto ?? false,
            byUserId: r.q_by_user_id === null ? null : String(r.q_by_user_id),
            until: r.q_until,
          },
    passes: r.q_passes,
    passRun: r.q_pass_run === null ? null : String(r.q_pass_run),
    releasedRun: r.released_run === null ? null : String(r.released_run),
  };
}

/** A health as the record json_to_recordset reads (ids as strings: bigint arrays take them as they are). */
function toRecord(projectId: string, testId: string, h: TestHealth): Record<string, unknown> {
  const q: Quarantine | null = h.quarantine;
  return {
    test_id: testId,
    project_id: projectId,
    w_run: h.entries.map((e) => e.run),
    w_bits: h.entries.map((e) => e.bits),
    w_stream: h.entries.map((e) => e.stream),
    w_commit: h.entries.map((e) => e.commit),
    runs: h.runs,
    flake_rate: h.flakeRate,
    flaky: h.flaky,
    last_status: h.lastStatus,
    last_run_id: h.lastRunId,
    first_seen_at: h.firstSeenAt.toISOString(),
    last_failed_at: h.lastFailedAt?.toISOString() ?? null,
    state: h.state,
    q_since: q?.since.toISOString() ?? null,
    q_reason: q?.reason ?? null,
    q_auto: q?.auto ?? null,
    q_by_user_id: q?.byUserId ?? null,
    q_until: q?.until?.toISOString() ?? null,
    q_passes: h.passes,
    q_pass_run: h.passRun,
    released_run: h.releasedRun,
  };
}

/** An expired quarantine ended by the sweep. */
export interface ExpiredQuarantine {
  testId: string;
  projectId: string;
  auto: boolean;
}

/** test_health (see migration TestHealth): a test's window and health, read and written by test id. */
@Injectable()
export class TestHealthRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** The stored health of these tests, row-locked until the commit, in test id order (no deadlock between writers). */
  async lock(tx: Pick<EntityManager, 'query'>, testIds: string[]): Promise<Map<string, TestHealth>> {
    const sorted = [...testIds].sort((a, b) =>
      a.length !== b.length ? a.length - b.length : a < b ? -1 : 1,
    );
    // One index probe a test (LATERAL): `test_id = ANY(…)` may be planned as a scan of a table that just grew.
    const rows: HealthRow[] = await tx.query(
      `SELECT h.* FROM unnest($1::bigint[]) WITH ORDINALITY AS k(id, n)
         CROSS JOIN LATERAL (SELECT ${HEALTH_COLUMNS} FROM test_health WHERE test_id = k.id) h
        ORDER BY k.n
          FOR UPDATE OF h`,
      [sorted],
    );
    return new Map(rows.map((r) => [String(r.test_id), toHealth(r)]));
  }

  /** Stores the health of tests that have a row (locked by `lock`). */
  async update(
    tx: Pick<EntityManager, 'query'>,
    projectId: string,
    rows: [string, TestHealth][],
  ): Promise<void> {
    if (!rows.length) {
      return;
    }
    await tx.query(
      `UPDATE test_health h SET ${SET_ALL}
         FROM json_to_recordset($1::json) AS u(${RECORD})
        WHERE h.test_id = u.test_id`,
      [JSON.stringify(rows.map(([testId, h]) => toRecord(projectId, testId, h)))],
    );
  }

  /**
   * Stores the health of tests that had no row; answers the tests whose row a concurrent writer inserted meanwhile
   * (left as that writer stored them: to be locked and weighed again).
   */
  async insert(
    tx: Pick<EntityManager, 'query'>,
    projectId: string,
    rows: [string, TestHealth][],
  ): Promise<string[]> {
    if (!rows.length) {
      return [];
    }
    const inserted: { test_id: string }[] = await tx.query(
      `INSERT INTO test_health (${HEALTH_COLUMNS}, project_id)
       SELECT ${HEALTH_COLUMNS}, project_id FROM json_to_recordset($1::json) AS u(${RECORD}) ORDER BY test_id
       ON CONFLICT (test_id) DO NOTHING
       RETURNING test_id`,
      [JSON.stringify(rows.map(([testId, h]) => toRecord(projectId, testId, h)))],
    );
    const done = new Set(inserted.map((r) => String(r.test_id)));
    return rows.map(([testId]) => testId).filter((id) => !done.has(id));
  }

  /** One test's health, row-locked, in a transaction of its own (quarantine and release by a person). */
  async change<T>(
    projectId: string,
    testId: string,
    work: (h: TestHealth | undefined, save: (h: TestHealth) => Promise<void>) => Promise<T>,
  ): Promise<T> {
    return this.db.transaction(async (tx) => {
      const found = (await this.lock(tx, [testId])).get(testId);
      return work(found, async (h) => {
        if (found) {
          await this.update(tx, projectId, [[testId, h]]);
        } else {
          await this.insert(tx, projectId, [[testId, h]]);
        }
      });
    });
  }

  /**
   * Ends quarantines whose `until` has passed (at most `limit`, skipping rows a writer holds): reads already treat
   * them as ended; this makes it durable and tells of it.
   */
  async endExpired(limit: number): Promise<ExpiredQuarantine[]> {
    const [rows]: [{ test_id: string; project_id: string; auto: boolean | null }[], number] =
      await this.db.query(
        `WITH due AS (
         SELECT test_id, q_auto FROM test_health WHERE q_until <= now() ORDER BY test_id LIMIT $1 FOR UPDATE SKIP LOCKED)
       UPDATE test_health h
          SET q_since = NULL, q_reason = NULL, q_auto = NULL, q_by_user_id = NULL, q_until = NULL, q_passes = 0,
              q_pass_run = NULL, released_run = h.last_run_id,
              state = CASE WHEN h.flaky THEN 'FLAKY' WHEN h.last_status IN ('FAILED', 'BROKEN') THEN 'FAILING'
                           ELSE 'HEALTHY' END
         FROM due WHERE h.test_id = due.test_id
       RETURNING h.test_id, h.project_id, due.q_auto AS auto`,
        [limit],
      );
    return rows.map((r) => ({
      testId: String(r.test_id),
      projectId: String(r.project_id),
      auto: r.auto ?? false,
    }));
  }

  /** A page of the project's quarantined tests (an `until` that passed has ended it), by ix_test_health_state. */
  async quarantined(
    projectId: string,
    order: string,
    size: number,
    offset: number,
  ): Promise<[QuarantinedRow[], number]> {
    const where = `h.project_id = $1 AND h.state = 'QUARANTINED' AND (h.q_until IS NULL OR h.q_until > now())`;
    const rows: QuarantinedRow[] = await this.db.query(
      `SELECT h.test_id AS "testId", t.suite, t.name, h.q_since AS since, h.q_reason AS reason, h.q_auto AS auto,
              h.q_until AS until
         FROM test_health h JOIN test_cases t ON t.id = h.test_id
        WHERE ${where}
        ORDER BY ${order} LIMIT $2 OFFSET $3`,
      [projectId, size, offset],
    );
    const [{ n }]: { n: string }[] = await this.db.query(
      `SELECT count(*) AS n FROM test_health h WHERE ${where}`,
      [projectId],
    );
    return [rows, Number(n)];
  }
}

export interface QuarantinedRow {
  testId: string;
  suite: string;
  name: string;
  since: Date;
  reason: string;
  auto: boolean;
  until: Date | null;
}
