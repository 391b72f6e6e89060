import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { type PageRequest, withWindowTotal } from '../common/paging/page.js';
import type { ResultStatus } from '../results/entities.js';
import { RUN_SUMMARY_COLUMNS, type RunSummaryRow } from '../common/run-summary.js';
import { CHANGES_SQL, PREVIOUS_RUN_SQL, type Change } from './changes.js';

export type GroupSortField = 'count' | 'key';
export type SuiteSortField = 'suite' | 'total' | 'failed';

export interface FailureGroupRow {
  key: string;
  count: number;
  failed: number;
  broken: number;
  tests: number;
  example: string | null;
  signature_id: string;
  is_new: boolean;
  triage: string;
  issue_url: string | null;
  issue_key: string | null;
  issue_title: string | null;
}

export interface SuiteRow {
  suite: string;
  total: number;
  failed: number;
}

export { CHANGES } from './changes.js';
export type { Change } from './changes.js';

export interface ChangeRow {
  testId: string;
  suite: string;
  name: string;
  change: Change;
  baseStatus: ResultStatus | null;
  headStatus: ResultStatus | null;
  message: string | null;
}

export type TrendRow = RunSummaryRow;

/** Reads over a run's or a project's results for the run, compare and trend views; each by an index. */
@Injectable()
export class InsightsRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /**
   * The run's failing outcomes (a test that passed on retry is none) grouped by their failure signature (each failing
   * result's, stored by the writer in failure_results: src/triage/), with a total count of groups. A group's example
   * is the message of its first result by id, as it was sent: looked up for the page's groups only, by the run's
   * index (min(message) would compare every message of a group of thousands, and pick an arbitrary one).
   */
  async failureGroups(
    runId: string,
    page: PageRequest<GroupSortField>,
  ): Promise<[FailureGroupRow[], number]> {
    const order = page.sort.map((s) => `${s.field === 'count' ? 'count' : 'key'} ${s.direction}`).join(', ');
    const rows: (FailureGroupRow & { n: string })[] = await this.db.query(
      `SELECT p.key, p.count, p.failed, p.broken, p.tests, e.example, p.n,
              p.signature_id, p.is_new, p.triage, p.issue_url, p.issue_key, p.issue_title FROM (
         SELECT s.key, g.count::int, g.failed::int, g.broken::int, g.tests::int, g.first_id, count(*) OVER () AS n,
                s.id AS signature_id, s.first_run_id = $1 AS is_new, s.triage, s.issue_url, s.issue_key, s.issue_title
           FROM (
             SELECT f.signature_id, count(*) AS count,
                    count(*) FILTER (WHERE r.status = 'FAILED') AS failed, count(*) FILTER (WHERE r.status = 'BROKEN') AS broken,
                    count(DISTINCT r.test_id) AS tests, min(r.id) AS first_id
               FROM results r JOIN failure_results f ON f.run_id = r.run_id AND f.result_id = r.id
              WHERE r.run_id = $1 AND r.status IN ('FAILED', 'BROKEN') AND r.outcome
              GROUP BY f.signature_id) g
           JOIN failure_signatures s ON s.id = g.signature_id
          ORDER BY ${order}, key
          LIMIT $2 OFFSET $3) p
       LEFT JOIN LATERAL (
         SELECT left(message, 2000) AS example FROM results
          WHERE run_id = $1 AND status IN ('FAILED', 'BROKEN') AND id = p.first_id) e ON true
       ORDER BY ${order}, key`,
      [runId, page.size, page.offset],
    );
    return withWindowTotal(rows, page, () =>
      this.count(
        `SELECT count(DISTINCT f.signature_id) AS n
           FROM results r JOIN failure_results f ON f.run_id = r.run_id AND f.result_id = r.id
          WHERE r.run_id = $1 AND r.status IN ('FAILED', 'BROKEN') AND r.outcome`,
        runId,
      ),
    );
  }

  /** The run's suites with their counts of tests (outcomes) and of failing ones. */
  async suites(runId: string, page: PageRequest<SuiteSortField>): Promise<[SuiteRow[], number]> {
    const order = page.sort.map((s) => `${s.field} ${s.direction}`).join(', ');
    const rows: (SuiteRow & { n: string })[] = await this.db.query(
      `SELECT suite, total::int, failed::int, count(*) OVER () AS n FROM (
         SELECT suite, count(*) AS total, count(*) FILTER (WHERE status IN ('FAILED', 'BROKEN')) AS failed
           FROM results WHERE run_id = $1 AND outcome GROUP BY suite) s
        ORDER BY ${order}, suite
        LIMIT $2 OFFSET $3`,
      [runId, page.size, page.offset],
    );
    return withWindowTotal(rows, page, () =>
      this.count(`SELECT count(DISTINCT suite) AS n FROM results WHERE run_id = $1 AND outcome`, runId),
    );
  }

  private async count(sql: string, runId: string): Promise<number> {
    const [{ n }]: { n: string }[] = await this.db.query(sql, [runId]);
    return Number(n);
  }

  /**
   * The run before `runId` (API.md, "Streams"): the finished run of its stream started last before it, by
   * ix_runs_project_stream_started.
   */
  async previousRun(runId: string): Promise<string | null> {
    const rows: { id: string }[] = await this.db.query(PREVIOUS_RUN_SQL, [runId]);
    return rows[0] ? String(rows[0].id) : null;
  }

  /** The project's streams, the one with the run started last first, each with its number of runs and that run. */
  async streams(
    projectId: string,
    page: PageRequest<never>,
  ): Promise<[(RunSummaryRow & { runs: number })[], number]> {
    const rows: (RunSummaryRow & { runs: number; n: string })[] = await this.db.query(
      `SELECT s.runs::int, l.*, count(*) OVER () AS n FROM (
         SELECT stream, count(*) AS runs FROM runs WHERE project_id = $1 GROUP BY stream) s
         CROSS JOIN LATERAL (
           SELECT ${RUN_SUMMARY_COLUMNS} FROM runs WHERE project_id = $1 AND stream = s.stream
            ORDER BY started_at DESC, id DESC LIMIT 1) l
        ORDER BY l.started_at DESC, l.id DESC
        LIMIT $2 OFFSET $3`,
      [projectId, page.size, page.offset],
    );
    return withWindowTotal(rows, page, async () => {
      const [{ n }]: { n: string }[] = await this.db.query(
        'SELECT count(DISTINCT stream) AS n FROM runs WHERE project_id = $1',
        [projectId],
      );
      return Number(n);
    });
  }

  /** How many tests changed in each way from `baseId` to `headId`. */
  async changeCounts(headId: string, baseId: string, sameRevision: boolean): Promise<Map<Change, number>> {
    const rows: { change: Change; n: string }[] = await this.db.query(
      `SELECT change, count(*) AS n FROM (${CHANGES_SQL}) c GROUP BY change`,
      [headId, baseId, sameRevision],
    );
    return new Map(rows.map((r) => [r.change, Number(r.n)]));
  }

  /**
   * A page of the tests that changed in one of `changes`, by suite and name, with the message of the head run's
   * last attempt (or the base run's, for a test that is not in the head run).
   */
  async changes(
    headId: string,
    baseId: string,
    sameRevision: boolean,
    changes: Change[],
    page: PageRequest<'suite' | 'name'>,
  ): Promise<[ChangeRow[], number]> {
    const rows: (ChangeRow & { n: string })[] = await this.db.query(
      `SELECT c.test_id AS "testId", t.suite, t.name, c.change, c.base_status AS "baseStatus",
              c.head_status AS "headStatus", m.message, count(*) OVER () AS n
         FROM (${CHANGES_SQL}) c
         JOIN test_cases t ON t.id = c.test_id
         LEFT JOIN LATERAL (
           SELECT message FROM results WHERE test_id = c.test_id AND run_id = c.last_run_id AND outcome AND id = c.last_id
         ) m ON true
        WHERE c.change = ANY($4::text[])
        ORDER BY ${page.sort.map((s) => `t.${s.field} ${s.direction}`).join(', ')}, t.id
        LIMIT $5 OFFSET $6`,
      [headId, baseId, sameRevision, changes, page.size, page.offset],
    );
    const [changed, total] = await withWindowTotal(rows, page, async () => {
      const counts = await this.changeCounts(headId, baseId, sameRevision);
      return changes.reduce((sum, c) => sum + (counts.get(c) ?? 0), 0);
    });
    return [changed.map((row) => ({ ...row, testId: String(row.testId) })), total];
  }

  /** The project's (or one stream's) last `limit` runs, newest first: by ix_runs_project_started (or _stream_). */
  trend(projectId: string, limit: number, stream?: string): Promise<TrendRow[]> {
    return stream === undefined
      ? this.db.query(
          `SELECT ${RUN_SUMMARY_COLUMNS} FROM runs WHERE project_id = $1 ORDER BY started_at DESC, id DESC LIMIT $2`,
          [projectId, limit],
        )
      : this.db.query(
          `SELECT ${RUN_SUMMARY_COLUMNS} FROM runs WHERE project_id = $1 AND stream = $3
            ORDER BY started_at DESC, id DESC LIMIT $2`,
          [projectId, limit, stream],
        );
  }
}
