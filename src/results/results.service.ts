import { Injectable } from '@nestjs/common';
import { EventEmitter2 } from '@nestjs/event-emitter';
import type { EntityManager } from 'typeorm';
import { AppError } from '../common/app-error.js';
import { stripFormatCharacters } from '../common/text.js';
import { retryConflicts } from '../database/conflict-retry.js';
import { Page, pageRequest, toPage } from '../common/paging/page.js';
import type { PageQueryDto } from '../common/paging/page-query.dto.js';
import type {
  AddResultsDto,
  HistoryAttemptDto,
  ResultFieldsDto,
  CreateRunDto,
  FinishRunDto,
  HistoryItemDto,
  ResultDetailDto,
  ResultDto,
  ResultsQueryDto,
  RunDto,
  RunsQueryDto,
  TestCaseDto,
  TestCasePageDto,
  TestsQueryDto,
} from './dto/results.dto.js';
import { TEST_STATES } from './dto/results.dto.js';
import { FAILURE_BITS } from './attempts.js';
import type { ResultEntity, RunEntity } from './entities.js';
import { type ResultFailure, ResultFailures } from './result-failures.js';
import type { ResultInput, RunCounts } from './result-input.js';
import {
  RESULTS_EVENT,
  RUN_FINISHED_EVENT,
  type ResultsEvent,
  type RunFinishedEvent,
} from './results.events.js';
import { defaultStream } from '../common/streams.js';
import { ResultsObservers, type RunRef } from './results-observers.js';
import { ResultsWriter } from './results.writer.js';
import { PURGE_REQUESTED } from '../common/purge.js';

import {
  CURSOR_SORTS,
  RunsRepository,
  testKeyOrder,
  type TestCaseRow,
  type TestKey,
  type TestState,
} from './runs.repository.js';
import { decodeCursor, encodeCursor, orderOf } from './tests-cursor.js';

/**
 * Test case ids a whole-run write keeps for the writer's cache, to be remembered once it has committed: enough
 * for a large project's tests, so that its next import finds them without a look-up, but not a million-case
 * report's every test case, held until its commit (and churning the cache of 200,000).
 */
const REMEMBERED_PER_RUN = 100_000;

/** Attempts listed with a result: a test retried more often than this within one run is a runaway loop. */
const MAX_ATTEMPTS = 100;

@Injectable()
export class ResultsService {
  constructor(
    private readonly runs: RunsRepository,
    private readonly writer: ResultsWriter,
    private readonly events: EventEmitter2,
    private readonly failures: ResultFailures,
    private readonly observers: ResultsObservers,
  ) {}

  async createRun(projectId: string, dto: CreateRunDto): Promise<RunDto> {
    const name = dto.name.trim();
    const attributes = dto.attributes ?? {};
    const run = await this.runs.createRun({
      projectId,
      name,
      startedAt: dto.startedAt ? new Date(dto.startedAt) : new Date(),
      attributes,
      stream: dto.stream?.trim() ?? defaultStream(name, attributes, await this.runs.streamAttributes(projectId)),
    });
    const body = toRunDto(run);
    this.emit({ projectId, event: 'run.created', runId: run.id, data: { run: body } });
    return body;
  }

  async listRuns(projectId: string, query: RunsQueryDto): Promise<Page<RunDto>> {
    const page = pageRequest(query, ['startedAt', 'name', 'id'] as const, [
      { field: 'startedAt', direction: 'DESC' },
    ]);
    const [rows, total] = await this.runs.listRuns(projectId, { status: query.status, q: query.q, stream: query.stream }, page);
    return toPage(rows.map(toRunDto), total, page);
  }

  async getRun(runId: string): Promise<RunDto> {
    return toRunDto(await this.found(runId));
  }

  /**
   * All or nothing: the batch was validated whole before this, and is written in one transaction; tried again when a
   * concurrent writer of the same tests made PostgreSQL roll it back (a deadlock: nothing was stored).
   */
  async addResults(runId: string, dto: AddResultsDto): Promise<{ ids: number[] }> {
    const items: ResultInput[] = dto.results;
    const outcome = await retryConflicts(() =>
      this.runs.transaction(async (tx) => {
        const run = await this.runs.runIn(tx, runId);
        if (!run) {
          throw AppError.notFound(`Run ${runId} not found`);
        }
        const finished = () => AppError.conflict(`Run ${runId} is finished; results can no longer be added`);
        if (run.status === 'FINISHED') {
          throw finished();
        }
        const written = await this.writer.write(tx, run, items);
        if (written.runFinished) {
          // Finished by a request that committed while this batch was being written: its gate did not count this
          // batch, so the batch is refused (rolled back) as if it had come after the finish.
          throw finished();
        }
        return { run, ...written, ...(await this.withStoredIds(tx, run, items, written.ids)) };
      }),
    );
    this.writer.remember([outcome]);
    this.emit({
      projectId: outcome.run.projectId,
      event: 'results.added',
      runId,
      data: { counts: outcome.counts, added: outcome.added },
    });
    return { ids: outcome.ids.map((id) => Number(id)) };
  }

  /**
   * A result the writer skipped because its UUID is stored already (a client retrying a batch, or repeating a
   * UUID within one) is answered with the id it is stored under, so a retry gets the answer the first try got.
   * A UUID stored in another run of the project is a 409 for the whole batch: that result is not this run's.
   */
  private async withStoredIds(
    tx: EntityManager,
    run: { id: string; projectId: string },
    items: ResultInput[],
    ids: (string | null)[],
  ): Promise<{ ids: string[]; added: number }> {
    const skipped = [
      ...new Set(items.flatMap((r, i) => (ids[i] === null && r.uuid ? [r.uuid.toLowerCase()] : []))),
    ];
    const known = skipped.length
      ? await this.runs.resultsByUuid(tx, run.projectId, skipped)
      : new Map<string, { id: string; runId: string }>();
    const answered = ids.map((id, i) => {
      if (id !== null) {
        return id;
      }
      const stored = known.get(items[i].uuid!.toLowerCase());
      if (!stored) {
        throw AppError.conflict(
          `results.${i}.uuid ${items[i].uuid} was stored and removed meanwhile; send the batch again`,
        );
      }
      if (stored.runId !== String(run.id)) {
        throw AppError.conflict(
          `results.${i}.uuid ${items[i].uuid} is stored already, in run ${stored.runId}`,
        );
      }
      return stored.id;
    });
    return { ids: answered, added: ids.filter((id) => id !== null).length };
  }

  async listResults(runId: string, query: ResultsQueryDto): Promise<Page<ResultDto>> {
    const page = pageRequest(query, ['id', 'name', 'suite', 'status', 'durationMs'] as const, [
      { field: 'id', direction: 'ASC' },
    ]);
    const { status, suite, q, group } = query;
    const allAttempts = query.attempts === 'all';
    const run = await this.runs.findRun(runId);
    if (!run) {
      throw AppError.notFound(`Run ${runId} not found`);
    }
    const counts = {
      PASSED: run.countPassed,
      FAILED: run.countFailed,
      BROKEN: run.countBroken,
      SKIPPED: run.countSkipped,
    };
    const [rows, total] = await this.runs.listResults(runId, { allAttempts, status, suite, q, group }, page, counts);
    const failures = await this.failures.of(runId, rows.filter(isFailure).map((r) => r.id));
    return toPage(
      rows.map((r) => withFailure(toResultDto(r), r, failures)),
      total,
      page,
    );
  }

  /** One result of the run, with every attempt of its test in the run (itself among them). */
  async getResult(runId: string, resultId: string): Promise<ResultDetailDto> {
    const result = /^\d{1,18}$/.test(resultId) ? await this.runs.findResult(runId, resultId) : null;
    if (!result) {
      throw AppError.notFound(`Result ${resultId} not found in run ${runId}`);
    }
    const [attempts, failures] = await Promise.all([
      this.runs.attempts(runId, result.testId, MAX_ATTEMPTS),
      this.failures.of(runId, isFailure(result) ? [result.id] : []),
    ]);
    return {
      ...withFailure(resultFields(result), result, failures),
      outcome: result.outcome,
      attempts: attempts.map((a) => ({
        id: Number(a.id),
        status: a.status,
        retry: a.retry,
        durationMs: a.durationMs === null ? null : Number(a.durationMs),
        startedAt: a.startedAt?.toISOString() ?? null,
      })),
    };
  }

  async finishRun(runId: string, dto: FinishRunDto): Promise<RunDto> {
    const run = await this.found(runId);
    const finishedAt = dto.finishedAt ? new Date(dto.finishedAt) : new Date();
    if (finishedAt < run.startedAt) {
      throw AppError.validation('finishedAt must not be before the run started');
    }
    const ref = { id: runId, projectId: run.projectId };
    if (
      run.status !== 'FINISHED' &&
      (await this.runs.finish(runId, finishedAt, (tx) => this.observers.runFinished(tx, ref)))
    ) {
      await this.finished({ projectId: run.projectId, runId });
    }
    const body = toRunDto((await this.runs.findRun(runId))!);
    this.emit({ projectId: run.projectId, event: 'run.finished', runId, data: { run: body } });
    return body;
  }

  /** Answers at once: the run is gone from every read, and its results are purged in the background (src/retention/). */
  async deleteRun(runId: string): Promise<void> {
    if (!(await this.runs.deleteRun(runId))) {
      throw AppError.notFound(`Run ${runId} not found`);
    }
    this.events.emit(PURGE_REQUESTED);
  }

  /** Pins the run (kept by retention whatever its age); answers the run. */
  async pin(runId: string): Promise<RunDto> {
    if (!(await this.runs.setPinned(runId, true))) {
      throw AppError.notFound(`Run ${runId} not found`);
    }
    return this.getRun(runId);
  }

  async unpin(runId: string): Promise<void> {
    if (!(await this.runs.setPinned(runId, false))) {
      throw AppError.notFound(`Run ${runId} not found`);
    }
  }

  /**
   * A page of the project's tests, by `page` (OFFSET over an index-only scan: fast, yet growing with the depth) or
   * by `cursor` (the previous page's nextCursor: read from its last key, no count). Every page gives its nextCursor.
   */
  async listTests(projectId: string, query: TestsQueryDto): Promise<TestCasePageDto> {
    const page = pageRequest(query, ['suite', 'name', 'id', 'flakeRate', 'lastFailedAt', 'firstSeenAt'] as const, [
      { field: 'suite', direction: 'ASC' },
      { field: 'name', direction: 'ASC' },
    ]);
    const states = query.state?.length ? testStates(query.state) : undefined;
    const keys = testKeyOrder(page.sort);
    const continuable = keys.every((k) => CURSOR_SORTS.includes(k.field));
    const list = {
      p: String(projectId),
      s: orderOf(keys),
      q: (query.q ?? '') + (states ? `\u0000${[...states].sort().join(',')}` : ''),
    };
    let from: { after?: TestKey; total?: number } = {};
    let offset = page.offset;
    if (query.cursor !== undefined) {
      if (query.page !== undefined) {
        throw AppError.validation(
          'page and cursor cannot be given together: a cursor says where its page starts',
        );
      }
      if (!continuable) {
        throw AppError.validation(`cursor continues only sorts on ${CURSOR_SORTS.join(', ')}: use page instead`);
      }
      const cursor = decodeCursor(query.cursor, list);
      from = { after: cursor.k, total: cursor.n };
      offset = cursor.o;
    }
    const [rows, total] = await this.runs.listTests(projectId, { q: query.q, states }, page, from);
    const last = rows.at(-1);
    const more = continuable && last !== undefined && rows.length === page.size && offset + rows.length < total;
    const nextCursor = more
      ? encodeCursor({
          ...list,
          k: keys.map((k) => String(last[k.field as 'suite' | 'name' | 'id'])),
          o: offset + rows.length,
          n: total,
        })
      : null;
    return {
      ...toPage(rows.map((r) => toTestCaseDto(r)), total, { page: Math.floor(offset / page.size), size: page.size }),
      nextCursor,
    };
  }

  async getTest(projectId: string, testId: string): Promise<TestCaseDto> {
    const [rows] = /^\d{1,18}$/.test(testId)
      ? await this.runs.listTests(
          projectId,
          { id: testId },
          { page: 0, size: 1, offset: 0, sort: [{ field: 'id', direction: 'ASC' }] },
        )
      : [[]];
    if (!rows.length) {
      throw AppError.notFound(`Test ${testId} not found`);
    }
    return toTestCaseDto(rows[0]);
  }

  async history(projectId: string, testId: string, query: PageQueryDto): Promise<Page<HistoryItemDto>> {
    const page = pageRequest(query, ['id'] as const, [{ field: 'id', direction: 'DESC' }]);
    const test = /^\d{1,18}$/.test(testId) ? await this.runs.findTest(projectId, testId) : null;
    if (!test) {
      throw AppError.notFound(`Test ${testId} not found`);
    }
    const [rows, total] = await this.runs.history(test.id, page);
    return toPage(
      rows.map((r) => ({ ...resultFields(r), runName: r.runName, attempts: r.attemptRows.map(toAttemptDto) })),
      total,
      page,
    );
  }

  /**
   * A whole run in one transaction, as an import stores a report: the run is created, `fill` hands it its results
   * in batches through `add` (each returns the counts of all added so far; the writer COPYs a batch while the next
   * is parsed and prepared, see ResultsWriter.openRun), and the run is finished. When `fill` throws
   * (a malformed report, a client gone mid-upload) nothing of the run is stored. The run's events follow the
   * commit: run.created, one results.added with the final counts, run.finished. `warnings` says what was changed
   * on the way in (invisible format characters removed from names: see stripFormatCharactersOf), once per run.
   */
  async writeWholeRun<T>(
    projectId: string,
    /** `name` may be decided only once the results are in (an import names its run after its first file). */
    fields: {
      name: string | (() => string);
      attributes: Record<string, string>;
      /** When the run's tests ran, decided once they are in (an import's report's own times); else now. */
      times?: () => { startedAt: Date; finishedAt: Date };
      /** Set by the client; else the default rule's, once the name is known. */
      stream?: string;
    },
    fill: (add: (items: ResultInput[], repeatsAreTests?: boolean) => Promise<RunCounts>) => Promise<T>,
  ): Promise<{ run: RunDto; filled: T; warnings: string[] }> {
    let runNameStripped = false;
    const outcome = await this.runs.longTransaction(async (tx) => {
      const nameOf = () => {
        const name = typeof fields.name === 'string' ? fields.name : fields.name();
        const clean = stripFormatCharacters(name);
        runNameStripped = clean !== name;
        return /\S/.test(clean) ? clean : '(unnamed)';
      };
      const streamAttributes = fields.stream ? [] : await this.runs.streamAttributes(projectId);
      const streamOf = () => fields.stream ?? defaultStream(nameOf(), fields.attributes, streamAttributes);
      const created = await this.runs.createRun(
        { projectId, name: nameOf(), startedAt: new Date(), attributes: fields.attributes, stream: streamOf() },
        tx,
      );
      // Test case ids to remember after the commit, as many as the writer's cache keeps: a report of a million
      // tests must not hold a million of them in memory until its end.
      const runRef: RunRef = { id: created.id, projectId, attributes: fields.attributes };
      const writer = this.writer.openRun(tx, runRef, REMEMBERED_PER_RUN);
      let filled: T;
      try {
        filled = await fill((items, repeatsAreTests) => writer.add(items, repeatsAreTests));
      } catch (error) {
        await writer.settled();
        throw error;
      }
      const { startedAt, finishedAt } = fields.times?.() ?? { startedAt: created.startedAt, finishedAt: new Date() };
      // The run as it will be once finished, for the observers of its outcomes (its name, so its stream, comes from
      // the report).
      runRef.stream = streamOf();
      runRef.startedAt = startedAt;
      const { learned, formatStripped, afterCommit } = await writer.finish();
      const finished = await this.runs.finishIn(tx, created.id, finishedAt, nameOf(), startedAt, streamOf());
      await this.observers.runFinished(tx, { id: String(created.id), projectId });
      return { finished, filled, learned, formatStripped, afterCommit };
    });
    this.writer.remember([{ learned: outcome.learned, afterCommit: outcome.afterCommit }]);
    const runId = String(outcome.finished.id);
    await this.finished({ projectId, runId });
    // Read again for what the run's finish decided after the commit (its gate).
    const run = toRunDto((await this.runs.findRun(runId)) ?? outcome.finished);
    this.emit({ projectId, event: 'run.created', runId, data: { run } });
    this.emit({
      projectId,
      event: 'results.added',
      runId,
      data: { counts: run.counts, added: run.counts.total },
    });
    this.emit({ projectId, event: 'run.finished', runId, data: { run } });
    const warnings = formatStrippedWarning(outcome.formatStripped, runNameStripped);
    return { run, filled: outcome.filled, warnings: warnings ? [warnings] : [] };
  }

  private async found(runId: string): Promise<RunEntity> {
    const run = await this.runs.findRun(runId);
    if (!run) {
      throw AppError.notFound(`Run ${runId} not found`);
    }
    return run;
  }

  private emit(event: ResultsEvent): void {
    this.events.emit(RESULTS_EVENT, event);
  }

  /** After the commit that finished the run: what derives from a finished run, awaited (see RUN_FINISHED_EVENT). */
  private async finished(event: RunFinishedEvent): Promise<void> {
    await this.events.emitAsync(RUN_FINISHED_EVENT, event);
  }
}

/** One line for what lost invisible format characters on the way in, or undefined when nothing did. */
function formatStrippedWarning(results: number, runName: boolean): string | undefined {
  if (!results && !runName) {
    return undefined;
  }
  const where = [
    ...(results
      ? [`the names of ${results} ${results === 1 ? 'result' : 'results'} (test, suite or attribute names)`]
      : []),
    ...(runName ? ["the run's name"] : []),
  ].join(' and from ');
  return `Invisible formatting characters (Unicode category Cf, such as U+202E RIGHT-TO-LEFT OVERRIDE) were removed from ${where}`;
}

export function toRunDto(r: RunEntity): RunDto {
  return {
    id: Number(r.id),
    projectId: Number(r.projectId),
    uuid: r.uuid,
    name: r.name,
    status: r.status,
    startedAt: r.startedAt.toISOString(),
    finishedAt: r.finishedAt?.toISOString() ?? null,
    attributes: r.attributes,
    stream: r.stream,
    counts: {
      total: r.countTotal,
      passed: r.countPassed,
      failed: r.countFailed,
      broken: r.countBroken,
      skipped: r.countSkipped,
      passedOnRetry: r.countPassedOnRetry,
      attempts: r.countAttempts,
    },
    newFailures: r.countNewFailures ?? null,
    // Not evaluated yet (a finish being evaluated, or a run finished before the gate existed): PENDING.
    gate: { status: r.status === 'FINISHED' ? (r.gateStatus ?? 'PENDING') : 'PENDING' },
    pinned: r.pinned ?? false,
  };
}

/** `state` values checked: 400 naming an unknown one. */
function testStates(given: string[]): TestState[] {
  const unknown = given.filter((s) => !(TEST_STATES as readonly string[]).includes(s));
  if (unknown.length) {
    throw AppError.validation(
      `state ${unknown.map((s) => `'${s.length > 40 ? `${s.slice(0, 40)}…` : s}'`).join(', ')} is not one of: ${TEST_STATES.join(', ')}`,
    );
  }
  return given as TestState[];
}

export function toTestCaseDto(t: TestCaseRow, now = new Date()): TestCaseDto {
  const quarantined = t.qSince !== null && (t.qUntil === null || t.qUntil.getTime() > now.getTime());
  return {
    id: Number(t.id),
    suite: t.suite,
    name: t.name,
    lastStatus: t.lastStatus,
    flaky: t.flakyNow,
    flakeRate: t.flakeRate,
    runs: t.runs,
    firstSeenAt: t.firstSeenAt.toISOString(),
    lastFailedAt: t.lastFailedAt?.toISOString() ?? null,
    quarantine: quarantined
      ? {
          since: t.qSince!.toISOString(),
          reason: t.qReason ?? '',
          auto: t.qAuto ?? false,
          byUserId: t.qByUserId === null ? null : Number(t.qByUserId),
          until: t.qUntil?.toISOString() ?? null,
        }
      : null,
    state: quarantined
      ? 'QUARANTINED'
      : t.flakyNow
        ? 'FLAKY'
        : t.lastStatus === 'FAILED' || t.lastStatus === 'BROKEN'
          ? 'FAILING'
          : 'HEALTHY',
  };
}

function isFailure(r: ResultEntity): boolean {
  return r.status === 'FAILED' || r.status === 'BROKEN';
}

/** A failing result's fields with its signature (null when it has none); others as they are. */
function withFailure<T extends ResultFieldsDto>(dto: T, r: ResultEntity, failures: Map<string, ResultFailure>): T {
  return isFailure(r) ? { ...dto, failure: failures.get(String(r.id)) ?? null } : dto;
}

function toResultDto(r: ResultEntity): ResultDto {
  return {
    ...resultFields(r),
    outcome: r.outcome,
    attempts: r.outcome ? r.attempts : null,
    passedOnRetry: r.outcome && r.status === 'PASSED' && (r.otherStatuses & FAILURE_BITS) !== 0,
  };
}

function toAttemptDto(r: ResultEntity): HistoryAttemptDto {
  return {
    id: Number(r.id),
    status: r.status,
    durationMs: r.durationMs === null ? null : Number(r.durationMs),
    message: r.message,
    trace: r.trace,
    retry: r.retry,
    startedAt: r.startedAt?.toISOString() ?? null,
  };
}

function resultFields(r: ResultEntity): ResultFieldsDto {
  return {
    id: Number(r.id),
    runId: Number(r.runId),
    testId: Number(r.testId),
    uuid: r.uuid,
    name: r.name,
    suite: r.suite,
    status: r.status,
    durationMs: r.durationMs === null ? null : Number(r.durationMs),
    message: r.message,
    trace: r.trace,
    startedAt: r.startedAt?.toISOString() ?? null,
    attributes: r.attributes,
    retry: r.retry,
  };
}
