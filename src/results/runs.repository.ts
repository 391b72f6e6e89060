import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager, ILike } from 'typeorm';
import type { PageRequest, SortOrder } from '../common/paging/page.js';
import { withoutStatementTimeout } from '../database/statement-timeout.js';
import { MAX_FLAKY_WINDOW, effectiveSettings, flakyWindowSql } from '../common/project-settings.js';
import { storeNewFailures } from '../insights/changes.js';
import { RESULT_STATUSES, ResultEntity, ResultStatus, RunEntity, TestCaseEntity } from './entities.js';

export type RunSortField = 'startedAt' | 'name' | 'id';
export type ResultSortField = 'id' | 'name' | 'suite' | 'status' | 'durationMs';
export type TestSortField = 'suite' | 'name' | 'id' | 'flakeRate' | 'lastFailedAt' | 'firstSeenAt';
/** The sorts a cursor can continue (keys of test_cases). */
export const CURSOR_SORTS: readonly TestSortField[] = ['suite', 'name', 'id'];
/** A test's health as a list filters it (src/stability/flakiness.ts). */
export type TestState = 'HEALTHY' | 'FAILING' | 'FLAKY' | 'QUARANTINED';

/**
 * The sort fields kept in test_health (src/stability/), each as its columns, nulls last either way (flake_rate is 0,
 * not null, for a test that has not run twice: it is read as null). The last failure sorts by its day first, the
 * column ix_test_health_last_failed_day holds (migration TestHealthLastFailedByDay): the same order, read a day at a
 * time from the index and sorted within it.
 */
const HEALTH_SORTS: Partial<Record<TestSortField, string[]>> = {
  flakeRate: ['h.flake_rate'],
  lastFailedAt: ['h.last_failed_day', 'h.last_failed_at'],
  firstSeenAt: ['h.first_seen_at'],
};

/**
 * A test's state as read (API.md, "Test health"): a quarantine whose `until` has passed has ended, whatever the
 * row still says until it is swept.
 */
const STATE_SQL = `(CASE WHEN h.q_since IS NOT NULL AND (h.q_until IS NULL OR h.q_until > now()) THEN 'QUARANTINED'
   WHEN h.flaky THEN 'FLAKY' WHEN h.last_status IN ('FAILED', 'BROKEN') THEN 'FAILING' ELSE 'HEALTHY' END)`;

/** A row of `SELECT * FROM results` as the entity TypeORM would have made of it. */
function toResultEntity(r: Record<string, unknown>): ResultEntity {
  return Object.assign(new ResultEntity(), {
    id: String(r.id),
    runId: String(r.run_id),
    projectId: String(r.project_id),
    testId: String(r.test_id),
    uuid: r.uuid as string | null,
    name: r.name as string,
    suite: r.suite as string,
    status: r.status as ResultStatus,
    durationMs: r.duration_ms === null ? null : String(r.duration_ms as string | number),
    message: r.message as string | null,
    trace: r.trace as string | null,
    startedAt: r.started_at as Date | null,
    attributes: r.attributes as Record<string, string>,
    retry: r.retry as number,
    outcome: r.outcome as boolean,
    attempts: r.attempts as number,
    otherStatuses: r.other_statuses as number,
    createdAt: r.created_at as Date,
  });
}

export interface RunFilter {
  status?: RunEntity['status'];
  q?: string;
  stream?: string;
}

export interface ResultFilter {
  /** Every attempt, not only each test's outcome. */
  allAttempts?: boolean;
  status?: ResultStatus[];
  suite?: string;
  q?: string;
  group?: string;
}

/**
 * Leaves out the results of runs deleted but not yet purged (run_purges, see the Retention migration): a read of a
 * test's results across runs must not show a run that is gone. The queue is small (the runs being deleted now), so
 * this is one hashed subplan. For a query whose results are `results` (unaliased) or in a subquery over it.
 */
export const NOT_PURGING = 'run_id NOT IN (SELECT run_id FROM run_purges)';

/**
 * A test's `runs` as read (test_health `h`): the stored count, except for a row that lags behind its last outcomes: a
 * steady test's behind its last plain passes (src/stability/flakiness.ts, `steady`: such passes are not written, from a
 * test's second run on) and a test failing steadily behind its plain failures of the last hour (settled-tests.ts,
 * LAG_MS), whose runs since its stored last run are counted from its outcomes, up to the project's window `w.win` (an
 * index range of at most that many results; empty for a row that does not lag). Its flake rate is read from it: none
 * until the test has run twice, else the stored one (0 for such a test). A row stored without a rate (by a replica of
 * a release before) is never left to lag (quietSql), so counting its later outcomes finds none; with
 * SVC_HEALTH_QUIET_SECOND_RUN=false neither is a row of one run.
 */
const RUNS_READ = `CASE WHEN h.q_since IS NULL AND NOT h.flaky AND h.last_status IN ('PASSED', 'FAILED', 'BROKEN')
       AND h.runs >= 1 AND h.runs < w.win
      THEN least(
        w.win,
        h.runs + (SELECT count(*)::int FROM (
                   SELECT 1 FROM results r
                    WHERE r.test_id = h.test_id AND r.outcome AND r.status <> 'SKIPPED' AND r.run_id > h.last_run_id
                      AND r.${NOT_PURGING} LIMIT ${MAX_FLAKY_WINDOW}) s))
      ELSE coalesce(h.runs, 0) END`;

/**
 * A test's `lastFailedAt` as read (test_health `h`): the stored one, or for a test failing steadily whose row lags
 * behind its plain failures of the last hour (see RUNS_READ), the start of the last run it failed in since its stored
 * last run. The tests list sorts by the stored one (ix_test_health_last_failed_day), which is that much early at most,
 * on the same day.
 */
const LAST_FAILED_READ = `CASE WHEN h.q_since IS NULL AND NOT h.flaky AND h.last_status IN ('FAILED', 'BROKEN')
      THEN greatest(h.last_failed_at, (
             SELECT max(ru.started_at) FROM results r JOIN runs ru ON ru.id = r.run_id
              WHERE r.test_id = h.test_id AND r.outcome AND r.status IN ('FAILED', 'BROKEN')
                AND r.run_id > h.last_run_id AND r.${NOT_PURGING}))
      ELSE h.last_failed_at END`;

/**
 * A test's `lastStatus` as read (test_health `h`): the stored one, or for a test failing steadily whose row lags (see
 * RUNS_READ), its outcome in the last run since its stored last run (FAILED or BROKEN: a replica that does not write a
 * repeat of one may not know that another wrote the other).
 */
const LAST_STATUS_READ = `CASE WHEN h.q_since IS NULL AND NOT h.flaky AND h.last_status IN ('FAILED', 'BROKEN')
      THEN coalesce((
             SELECT r.status FROM results r
              WHERE r.test_id = h.test_id AND r.outcome AND r.status <> 'SKIPPED' AND r.run_id > h.last_run_id
                AND r.${NOT_PURGING}
              ORDER BY r.run_id DESC LIMIT 1), h.last_status)
      ELSE h.last_status END`;

/** A LIKE pattern for `text` anywhere, its own wildcards taken literally. */
export function containing(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/** The sort key of a test case in a page's order: its values of the sorted fields, then its id. */
export type TestKey = (string | number)[];

/** The columns a page of tests is ordered by: the requested ones, then the id (ascending) to break ties. */
export function testKeyOrder(sort: SortOrder<TestSortField>[]): SortOrder<TestSortField>[] {
  return sort.some((s) => s.field === 'id') ? sort : [...sort, { field: 'id', direction: 'ASC' }];
}

/**
 * `t` comes after `key` in the order `keys`. All one direction (the default suite, name, id): one row comparison,
 * which the index range-scans from the key. Mixed directions: the same as one OR per column.
 */
function afterKey(keys: SortOrder<TestSortField>[], key: TestKey, params: unknown[]): string {
  const placeholders = keys.map((k, i) => {
    params.push(key[i]);
    return `$${params.length}::${k.field === 'id' ? 'bigint' : 'text'}`;
  });
  if (keys.every((k) => k.direction === keys[0].direction)) {
    const op = keys[0].direction === 'ASC' ? '>' : '<';
    return `(${keys.map((k) => `t.${k.field}`).join(', ')}) ${op} (${placeholders.join(', ')})`;
  }
  const branches = keys.map((k, i) => {
    const equal = keys.slice(0, i).map((e, j) => `t.${e.field} = ${placeholders[j]}`);
    return `(${[...equal, `t.${k.field} ${k.direction === 'ASC' ? '>' : '<'} ${placeholders[i]}`].join(' AND ')})`;
  });
  return `(${branches.join(' OR ')})`;
}

export interface TestCaseRow {
  id: string;
  suite: string;
  name: string;
  /** The status of the test's newest result. */
  lastStatus: ResultStatus | null;
  flakyNow: boolean;
  flakeRate: number | null;
  runs: number;
  firstSeenAt: Date;
  lastFailedAt: Date | null;
  qSince: Date | null;
  qReason: string | null;
  qAuto: boolean | null;
  qByUserId: string | null;
  qUntil: Date | null;
}

@Injectable()
export class RunsRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  transaction<T>(work: (tx: EntityManager) => Promise<T>): Promise<T> {
    return this.db.transaction(work);
  }

  /** A transaction that may rightly run longer than the statement timeout: a whole report's import. */
  longTransaction<T>(work: (tx: EntityManager) => Promise<T>): Promise<T> {
    return this.db.transaction(async (tx) => {
      await withoutStatementTimeout(tx);
      return work(tx);
    });
  }

  /** Creates the run, inside `tx` when given (an import stores its run and results in one transaction). */
  createRun(
    fields: Pick<RunEntity, 'projectId' | 'name' | 'startedAt' | 'attributes' | 'stream'> & {
      uuid?: string | null;
    },
    tx: EntityManager = this.db.manager,
  ): Promise<RunEntity> {
    const repo = tx.getRepository(RunEntity);
    return repo.save(repo.create(fields));
  }

  async finishIn(
    tx: EntityManager,
    id: string,
    finishedAt: Date,
    name: string,
    startedAt?: Date,
    stream?: string,
  ): Promise<RunEntity> {
    await tx.getRepository(RunEntity).update(
      { id },
      {
        status: 'FINISHED',
        finishedAt,
        name,
        ...(startedAt ? { startedAt } : {}),
        ...(stream ? { stream } : {}),
      },
    );
    // The run's stream and start are final only now: its run before is known.
    await storeNewFailures(tx, id);
    return (await tx.getRepository(RunEntity).findOneBy({ id }))!;
  }

  /** The attributes whose values a run's default stream takes: the project's settings streams.attributes. */
  async streamAttributes(projectId: string): Promise<string[]> {
    const rows: { settings: unknown }[] = await this.db.query('SELECT settings FROM projects WHERE id = $1', [
      projectId,
    ]);
    return effectiveSettings(rows[0]?.settings).streams.attributes;
  }

  findRun(id: string): Promise<RunEntity | null> {
    return this.db.getRepository(RunEntity).findOneBy({ id });
  }

  /**
   * Reads the run inside the writer's transaction; counts stay right through atomic increments, not locks. With what
   * the writer's observers need of it (stream, attributes, start), so that they need not read it again.
   */
  async runIn(
    tx: EntityManager,
    id: string,
  ): Promise<Pick<RunEntity, 'id' | 'projectId' | 'status' | 'stream' | 'attributes' | 'startedAt'> | null> {
    // Plain SQL: on a 1000-result write, TypeORM's find took a noticeable share of the request's own time.
    const rows: {
      id: string;
      project_id: string;
      status: RunEntity['status'];
      stream: string;
      attributes: Record<string, string>;
      started_at: Date;
    }[] = await tx.query(
      'SELECT id, project_id, status, stream, attributes, started_at FROM runs WHERE id = $1',
      [id],
    );
    const row = rows[0];
    return row
      ? {
          id: String(row.id),
          projectId: String(row.project_id),
          status: row.status,
          stream: row.stream,
          attributes: row.attributes,
          startedAt: row.started_at,
        }
      : null;
  }

  /**
   * The project's results with these (lower-case) UUIDs: id and run, by UUID. One probe of the unique index per
   * UUID by construction (LATERAL … LIMIT 1, as the writer looks up test cases): with `uuid = ANY($2)` the
   * planner, going by the statistics of a table that had just grown by a burst of results, scanned all of the
   * project's results.
   */
  async resultsByUuid(
    tx: EntityManager,
    projectId: string,
    uuids: string[],
  ): Promise<Map<string, { id: string; runId: string }>> {
    const rows: { id: string; run_id: string; uuid: string }[] = await tx.query(
      `SELECT r.id, r.run_id, r.uuid FROM unnest($2::uuid[]) AS k(uuid)
         CROSS JOIN LATERAL (SELECT id, run_id, uuid FROM results WHERE project_id = $1 AND uuid = k.uuid LIMIT 1) r`,
      [projectId, uuids],
    );
    return new Map(rows.map((r) => [r.uuid, { id: String(r.id), runId: String(r.run_id) }]));
  }

  async projectOfRun(id: string): Promise<string | null> {
    const rows: { project_id: string }[] = await this.db.query('SELECT project_id FROM runs WHERE id = $1', [
      id,
    ]);
    return rows[0] ? String(rows[0].project_id) : null;
  }

  listRuns(
    projectId: string,
    filter: RunFilter,
    page: PageRequest<RunSortField>,
  ): Promise<[RunEntity[], number]> {
    const order = Object.fromEntries(page.sort.map((s) => [s.field, s.direction]));
    return this.db.getRepository(RunEntity).findAndCount({
      where: {
        projectId,
        ...(filter.status ? { status: filter.status } : {}),
        ...(filter.q ? { name: ILike(containing(filter.q)) } : {}),
        ...(filter.stream !== undefined ? { stream: filter.stream } : {}),
      },
      // The id breaks ties, in the client's direction when it sorted by id too.
      order: { ...order, id: order.id ?? 'DESC' },
      skip: page.offset,
      take: page.size,
    });
  }

  /**
   * Finishes the run once, with its new failures and what `also` adds to the finish's transaction (the results
   * observers' runFinished); a second finish changes nothing. Whether this one did.
   */
  finish(id: string, finishedAt: Date, also: (tx: EntityManager) => Promise<void>): Promise<boolean> {
    return this.db.transaction(async (tx) => {
      const [rows]: [{ id: string }[], number] = await tx.query(
        `UPDATE runs SET status = 'FINISHED', finished_at = $2 WHERE id = $1 AND status <> 'FINISHED' RETURNING id`,
        [id, finishedAt],
      );
      if (rows.length) {
        await storeNewFailures(tx, id);
        await also(tx);
      }
      return rows.length > 0;
    });
  }

  /**
   * Removes the run's row at once, whatever its size: its delete trigger queues the run in run_purges, whose results
   * the purge then deletes in bounded batches (src/retention/). A writer's batch to the run holds its row until it
   * commits (the count update), so this waits for it; a batch after this finds no run (404).
   */
  async deleteRun(id: string): Promise<boolean> {
    const [, affected]: [unknown, number] = await this.db.query('DELETE FROM runs WHERE id = $1', [id]);
    return affected > 0;
  }

  /** Pins or unpins the run; false when it is gone. */
  async setPinned(id: string, pinned: boolean): Promise<boolean> {
    const [, affected]: [unknown, number] = await this.db.query('UPDATE runs SET pinned = $2 WHERE id = $1', [
      id,
      pinned,
    ]);
    return affected > 0;
  }

  /** The run's results: by its index on (run_id, status, id); the other filters narrow the run's own results. */
  listResults(
    runId: string,
    filter: ResultFilter,
    page: PageRequest<ResultSortField>,
    counts?: Record<ResultStatus, number>,
  ): Promise<[ResultEntity[], number]> {
    const byIdOnly = page.sort.every((s) => s.field === 'id');
    // The run's counts are of outcomes: the total of a page of every attempt is counted.
    const outcomes = !filter.allAttempts;
    if (
      counts &&
      byIdOnly &&
      outcomes &&
      filter.suite === undefined &&
      !filter.q &&
      filter.group === undefined
    ) {
      return this.resultsInIdOrder(
        runId,
        filter.status?.length ? filter.status : [...RESULT_STATUSES],
        page,
        counts,
      );
    }
    const query = this.db
      .getRepository(ResultEntity)
      .createQueryBuilder('r')
      .where('r.run_id = :runId', { runId });
    if (outcomes) {
      query.andWhere('r.outcome');
    }
    if (filter.status?.length) {
      query.andWhere('r.status IN (:...status)', { status: filter.status });
    }
    if (filter.suite !== undefined) {
      query.andWhere('r.suite = :suite', { suite: filter.suite });
    }
    if (filter.q) {
      query.andWhere('r.name ILIKE :q', { q: containing(filter.q) });
    }
    if (filter.group !== undefined) {
      // The group's results: those whose signature (failure_results, src/triage/) has this key.
      query.andWhere(
        `r.status IN ('FAILED', 'BROKEN') AND EXISTS (
           SELECT 1 FROM failure_results f JOIN failure_signatures s ON s.id = f.signature_id
            WHERE f.run_id = r.run_id AND f.result_id = r.id AND s.key = :group)`,
        { group: filter.group },
      );
    }
    for (const { field, direction } of page.sort) {
      query.addOrderBy(`r.${field}`, direction);
    }
    if (!page.sort.some((s) => s.field === 'id')) {
      query.addOrderBy('r.id', 'ASC');
    }
    return query.skip(page.offset).take(page.size).getManyAndCount();
  }

  /**
   * A page of the run's results of some statuses in id order, the run page's first view, without reading the run
   * whole: one ordered scan of ix_results_run_status per status, merged (Merge Append), each stopping after
   * offset + size rows. A single scan of the index under all statuses is not in id order, so PostgreSQL read and
   * sorted every result of the run for each page: on a run of 100,000, 50-100 ms a page before, under 5 ms the first
   * page now. The count is the run's own (kept exact as results are stored): no count of the rows either.
   */
  private async resultsInIdOrder(
    runId: string,
    statuses: ResultStatus[],
    page: PageRequest<ResultSortField>,
    counts: Record<ResultStatus, number>,
  ): Promise<[ResultEntity[], number]> {
    const direction = page.sort[0]?.direction ?? 'ASC';
    const branches = statuses.map(
      // Outcomes only: the few earlier attempts among a status's results are read and passed over.
      (_, i) =>
        `(SELECT * FROM results WHERE run_id = $1 AND status = $${i + 5} AND outcome ORDER BY id ${direction} LIMIT $4)`,
    );
    const rows: Record<string, unknown>[] = await this.db.query(
      `SELECT * FROM (${branches.join(' UNION ALL ')}) r ORDER BY id ${direction} LIMIT $2 OFFSET $3`,
      [runId, page.size, page.offset, page.offset + page.size, ...statuses],
    );
    const total = statuses.reduce((sum, status) => sum + counts[status], 0);
    return [rows.map(toResultEntity), total];
  }

  /**
   * One result of the run. Results have no index on their id alone (see ResultsWithoutIdIndex): the run's index on
   * (run_id, status, id) finds it, probed once per status.
   */
  async findResult(runId: string, id: string): Promise<ResultEntity | null> {
    const rows: Record<string, unknown>[] = await this.db.query(
      `SELECT * FROM results WHERE run_id = $1 AND status = ANY($2::varchar[]) AND id = $3`,
      [runId, RESULT_STATUSES, id],
    );
    return rows[0] ? toResultEntity(rows[0]) : null;
  }

  /**
   * The test's attempts in the run, in the order the API defines (retry, then start, then arrival), at most `limit`:
   * by test and run, the outcome and the earlier attempts apart, as each kind has its index (uq_results_test_run_outcome,
   * ix_results_test_attempts).
   */
  async attempts(runId: string, testId: string, limit: number): Promise<ResultEntity[]> {
    const rows: Record<string, unknown>[] = await this.db.query(
      `SELECT * FROM (SELECT * FROM results WHERE test_id = $1 AND run_id = $2 AND outcome
                      UNION ALL
                      SELECT * FROM results WHERE test_id = $1 AND run_id = $2 AND NOT outcome) r
        ORDER BY retry, started_at NULLS FIRST, id LIMIT $3`,
      [testId, runId, limit],
    );
    return rows.map(toResultEntity);
  }

  /**
   * Test cases with their health as kept by stability/ in test_health (last status, flakiness, flake rate, runs,
   * first seen, last failed, quarantine): columns, never the tests' results.
   *
   * The page is chosen first, from the driving table alone, and only its rows are joined: with joins above the
   * OFFSET, PostgreSQL joined every row it skipped (page 2,550 of 51,000 tests took 1.3-1.9 s when that meant reading
   * results). Without a state filter or a health sort the choice is an index-only scan of test_cases'
   * ix_test_cases_project_order (project, suite, name, id); `after` (the sort key of the previous page's last row, see
   * TestsCursor) starts the scan there instead of counting rows off. With `states` or a health sort it is made from
   * test_health (ix_test_health_state: a state's tests by flake rate). `total` given (carried by the cursor): no count.
   */
  async listTests(
    projectId: string,
    by: { q?: string; id?: string; states?: TestState[] },
    page: PageRequest<TestSortField>,
    from: { after?: TestKey; total?: number } = {},
  ): Promise<[TestCaseRow[], number]> {
    const keys = testKeyOrder(page.sort);
    const health = by.states !== undefined || keys.some((k) => HEALTH_SORTS[k.field]);
    const order = keys
      .map((k) => {
        const columns = HEALTH_SORTS[k.field];
        if (columns) {
          return columns.map((c) => `${c} ${k.direction} NULLS LAST`).join(', ');
        }
        return `${health && k.field === 'id' ? 'h.test_id' : `t.${k.field}`} ${k.direction}`;
      })
      .join(', ');
    const params: unknown[] = [projectId];
    const filters: string[] = [];
    if (by.id) {
      params.push(by.id);
      filters.push(`t.id = $${params.length}`);
    } else if (by.q) {
      params.push(containing(by.q));
      filters.push(`(t.suite ILIKE $${params.length} OR t.name ILIKE $${params.length})`);
    }
    if (await this.pruning(projectId)) {
      // Runs of the project deleted and not yet purged, or test cases they left not yet deleted: a test case shows
      // only while it has an outcome to show (an index probe a test case, paid only meanwhile).
      filters.push(
        `EXISTS (SELECT 1 FROM results r WHERE r.test_id = ${health ? 'h.test_id' : 't.id'} AND r.outcome AND r.${NOT_PURGING})`,
      );
    }
    const statesParam = by.states ? params.push(by.states) : 0;
    // Test cases joined only where the page needs them (a name filter or order, a cursor's key).
    const withCases =
      !health ||
      by.id !== undefined ||
      by.q !== undefined ||
      from.after !== undefined ||
      keys.some((k) => k.field === 'suite' || k.field === 'name');
    /** The project's test_health rows in `states` (their state as read), each with `columns`. */
    const healthRows = (columns: string) => {
      if (!by.states) {
        return `(SELECT ${columns} FROM test_health h WHERE h.project_id = $1) h`;
      }
      // The stored state is the state as read, except for a quarantine whose `until` has passed (until the sweep
      // clears it): those few are weighed apart, so that the common branch is a range of ix_test_health_state.
      const states = `$${statesParam}::varchar[]`;
      const branches = [
        `SELECT ${columns} FROM test_health h WHERE h.project_id = $1 AND h.state = ANY(${states})` +
          (by.states.includes('QUARANTINED')
            ? ` AND (h.state <> 'QUARANTINED' OR h.q_until IS NULL OR h.q_until > now())`
            : ''),
      ];
      if (by.states.some((state) => state !== 'QUARANTINED')) {
        branches.push(
          `SELECT ${columns} FROM test_health h WHERE h.project_id = $1 AND h.state = 'QUARANTINED' AND h.q_until <= now() AND ${STATE_SQL} = ANY(${states})`,
        );
      }
      return `(${branches.join(' UNION ALL ')}) h`;
    };
    const source = (columns: string) =>
      !health
        ? 'test_cases t WHERE t.project_id = $1'
        : withCases
          ? `${healthRows(columns)} JOIN test_cases t ON t.id = h.test_id WHERE t.project_id = $1`
          : `${healthRows(columns)} WHERE true`;
    const filter = filters.map((f) => ` AND ${f}`).join('');
    const countParams = [...params];
    let offset = page.offset;
    if (from.after) {
      filters.push(afterKey(keys, from.after, params));
      offset = 0;
    }
    params.push(page.size, offset);
    const rows: Record<string, unknown>[] = await this.db.query(
      `SELECT t.id, t.suite, t.name, ${LAST_STATUS_READ} AS "lastStatus", coalesce(h.flaky, false) AS "flakyNow",
              CASE WHEN rr.runs >= 2 THEN h.flake_rate END AS "flakeRate", rr.runs, coalesce(h.first_seen_at, t.created_at) AS "firstSeenAt",
              ${LAST_FAILED_READ} AS "lastFailedAt", h.q_since AS "qSince", h.q_reason AS "qReason", h.q_auto AS "qAuto",
              h.q_by_user_id AS "qByUserId", h.q_until AS "qUntil"
         FROM (SELECT ${health ? 'h.test_id' : 't.id'} AS id
                 FROM ${source('h.test_id, h.flake_rate, h.last_failed_day, h.last_failed_at, h.first_seen_at')}${filters.map((f) => ` AND ${f}`).join('')}
                ORDER BY ${order} LIMIT $${params.length - 1} OFFSET $${params.length}) p
         JOIN test_cases t ON t.id = p.id
         LEFT JOIN test_health h ON h.test_id = t.id
        CROSS JOIN (SELECT ${flakyWindowSql('$1')} AS win) w
        CROSS JOIN LATERAL (SELECT ${RUNS_READ} AS runs) rr
        ORDER BY ${order}`,
      params,
    );
    const tests = rows.map(
      (r) =>
        ({
          ...r,
          id: String(r.id),
          qByUserId: r.qByUserId === null ? null : String(r.qByUserId as string | number),
          lastStatus: r.lastStatus ?? null,
        }) as TestCaseRow,
    );
    if (from.total !== undefined) {
      return [tests, from.total];
    }
    const [{ n }]: { n: string }[] = await this.db.query(
      `SELECT count(*) AS n FROM ${source('h.test_id')}${filter}`,
      countParams,
    );
    return [tests, Number(n)];
  }

  /** Whether runs of the project are being purged or the test cases they left are still to be deleted. */
  private async pruning(projectId: string): Promise<boolean> {
    const [row]: { pruning: boolean }[] = await this.db.query(
      `SELECT EXISTS (SELECT 1 FROM run_purges WHERE project_id = $1)
              OR EXISTS (SELECT 1 FROM projects WHERE id = $1 AND tests_to_prune) AS pruning`,
      [projectId],
    );
    return row.pruning;
  }

  findTest(projectId: string, testId: string): Promise<TestCaseEntity | null> {
    return this.db.getRepository(TestCaseEntity).findOneBy({ id: testId, projectId });
  }

  /**
   * The test's outcomes, one a run, newest first (by uq_results_test_run_outcome), each with its run's name and, for
   * a test attempted more than once in a run, every attempt there, first to last. The page's `id` order is the runs':
   * a test has one outcome a run, and runs' ids grow with their creation.
   */
  async history(
    testId: string,
    page: PageRequest<'id'>,
  ): Promise<[(ResultEntity & { runName: string; attemptRows: ResultEntity[] })[], number]> {
    const [rows, total] = await this.db
      .getRepository(ResultEntity)
      .createQueryBuilder('results')
      .where('results.test_id = :testId AND results.outcome', { testId })
      .andWhere(NOT_PURGING)
      .orderBy('results.run_id', page.sort[0]?.direction ?? 'DESC')
      .skip(page.offset)
      .take(page.size)
      .getManyAndCount();
    const names: { id: string; name: string }[] = rows.length
      ? await this.db.query('SELECT id, name FROM runs WHERE id = ANY($1::bigint[])', [
          [...new Set(rows.map((r) => r.runId))],
        ])
      : [];
    const byId = new Map(names.map((n) => [String(n.id), n.name]));
    const retried = rows.filter((r) => r.attempts > 1).map((r) => r.runId);
    const attempts: Record<string, unknown>[] = retried.length
      ? await this.db.query(
          `SELECT * FROM (SELECT * FROM results WHERE test_id = $1 AND run_id = ANY($2::bigint[]) AND outcome
                          UNION ALL
                          SELECT * FROM results WHERE test_id = $1 AND run_id = ANY($2::bigint[]) AND NOT outcome) r
            ORDER BY run_id, retry, started_at NULLS FIRST, id`,
          [testId, retried],
        )
      : [];
    const byRun = new Map<string, ResultEntity[]>();
    for (const row of attempts.map(toResultEntity)) {
      byRun.set(row.runId, [...(byRun.get(row.runId) ?? []), row]);
    }
    return [
      rows.map((r) =>
        Object.assign(r, {
          runName: byId.get(String(r.runId)) ?? '',
          attemptRows: byRun.get(String(r.runId)) ?? [r],
        }),
      ),
      total,
    ];
  }
}
