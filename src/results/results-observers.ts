import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { ResultStatus } from './entities.js';
import type { ResultInput } from './result-input.js';

/** The run a write goes to. */
export interface RunRef {
  id: string;
  projectId: string;
  /**
   * What observers may need of the run, when the caller has it (V1 and V2 pass the run's row; an import sets them
   * before its finish, once its name, and so its stream, is known): else an observer reads the run.
   */
  stream?: string;
  attributes?: Record<string, string>;
  startedAt?: Date;
}

/** One stored result of a batch: its id, its test case, and what was sent. */
export interface StoredResult {
  id: string;
  testId: string;
  input: ResultInput;
}

/** A test's outcome in a run once a write has settled it (see attempts.ts). */
export interface TestOutcome {
  testId: string;
  status: ResultStatus;
  /** The statuses of the test's other attempts in the run, as bits (attempts.ts, STATUS_BITS). */
  otherStatuses: number;
  /**
   * The test case was inserted by this write's transaction (a test the project had never seen): no state derived
   * from it can exist yet, nor be written by another transaction before this one commits (nothing else knows its
   * id), so an observer may insert its rows without looking for them first.
   */
  created?: boolean;
}

/**
 * The outcomes a write settled, as observers read them: a V1/V2 batch's are an array; a whole run's (an import's
 * finish: every test of a report, a million of them at times) are made a slice at a time as they are read, from
 * what the writer kept of each test (a number or two), rather than held all at once as objects.
 */
export interface OutcomeList extends Iterable<TestOutcome> {
  readonly length: number;
  slice(start?: number, end?: number): TestOutcome[];
}

/**
 * Results deleted by one batch of the purge (src/retention/): a run removed by the retention cleanup or by
 * `DELETE /api/runs/{id}`. The runs' rows are gone already (no read by run finds them, and reads of a test's results
 * leave out the runs still in `run_purges`); these are the runs whose results the batch deleted, and every test case
 * that had a result among them. Test cases left without any result are deleted after the purge, by the retention
 * service, under the lock that keeps writers out (see ResultsWriter's cache guard).
 */
export interface DeletedResults {
  projectId: string;
  runIds: readonly string[];
  /** Distinct, ascending. */
  testIds: readonly string[];
  /** Those of `testIds` a failing result (FAILED, BROKEN) of which went. */
  failedTestIds: readonly string[];
  /** When the latest of the runs started; null when not known (any failing test may have lost its last failure). */
  startedAt: Date | null;
  /**
   * The signatures of the failing results deleted (their failure_results rows, src/triage/, deleted with them): how
   * many of a test's failing results of a signature in a run went. Empty when none of them had one.
   */
  failures: readonly DeletedFailures[];
}

/** Failing results of one test in one run, of one signature, deleted by a purge batch (see DeletedResults). */
export interface DeletedFailures {
  runId: string;
  signatureId: string;
  testId: string;
  count: number;
}

/** The work an observer does for a batch once its results are stored, inside the batch's transaction. */
export type BatchWork = (tx: EntityManager) => Promise<void>;

/**
 * What an observer does once the write's transaction has committed (live events, audit records: what may lag and
 * must not be told of a write that rolled back). The writer's callers run it through `ResultsWriter.remember`.
 */
export type AfterCommit = () => void;

/**
 * State derived from results that must be exact with them (DESIGN.md, "Derived state"): a test case's recent
 * outcomes and health, a failure signature's counts. The results writer calls its observers inside the batch's
 * transaction, so such state commits or rolls back with the results; everything that may lag (live events, gate
 * evaluation, sending notifications) belongs after the commit instead, with, when it must not be lost to a crash
 * right after the commit, a record of it written in the transaction (the notifications a finish owes: runFinished).
 * An observer touches only the rows of its batch, never a scan of a project's history, in a stable order (by id)
 * so that two writers cannot deadlock on them.
 */
export interface ResultsObserver {
  /**
   * A batch of results about to be stored (repeats of a UUID already stored are left out), given synchronously
   * while its inputs are at hand: the observer takes what it needs of them (the inputs are let go right after)
   * and answers the work to run once the batch's results are stored, or nothing. A whole-run writer (an import)
   * runs that work after the batch's COPY, while the next batch is prepared.
   */
  resultsStored?(run: RunRef, batch: readonly StoredResult[]): BatchWork | undefined;
  /**
   * The outcomes of tests in the run after a write, for every test the write touched: each V1/V2 batch, or, for a
   * run written whole, every test of the run at its finish. Called after the batch's `resultsStored` work.
   * May answer what to do once the transaction has committed (see AfterCommit).
   */
  outcomesSettled?(
    tx: EntityManager,
    run: RunRef,
    outcomes: OutcomeList,
  ): Promise<AfterCommit | undefined | void>;
  /**
   * A batch of results deleted (see DeletedResults), inside the batch's transaction: the observer recounts what it
   * derived from them for these test cases only (a test's window from its remaining outcomes; a signature's
   * occurrences, tests and runs, deleting a signature left without any), so its state commits with the deletion.
   * Not called for the purge of a project being deleted: its derived rows go with the project.
   */
  resultsDeleted?(tx: EntityManager, deleted: DeletedResults): Promise<void>;
  /**
   * The run finished, inside the transaction that finishes it (a V1 finish, a V2 finish message, an import's end),
   * once a run: what must commit with the finish, such as the notifications it owes (src/notifications/: one row,
   * announced after the commit, so that a crash right after the commit loses none). Keep it to a statement or two:
   * it is on the finish's path.
   */
  runFinished?(tx: EntityManager, run: { id: string; projectId: string }): Promise<void>;
}

/**
 * The results writer's observers. Feature modules register theirs when they start (`onModuleInit`), so that the
 * results module does not depend on the features derived from it.
 */
@Injectable()
export class ResultsObservers {
  private readonly observers: ResultsObserver[] = [];

  register(observer: ResultsObserver): void {
    this.observers.push(observer);
  }

  /** The work of every observer for a batch (see ResultsObserver.resultsStored), or undefined when there is none. */
  resultsStored(run: RunRef, batch: readonly StoredResult[]): BatchWork | undefined {
    let works: BatchWork[] | undefined;
    for (const observer of this.observers) {
      const work = observer.resultsStored?.(run, batch);
      if (work) {
        (works ??= []).push(work);
      }
    }
    if (!works) {
      return undefined;
    }
    return async (tx) => {
      for (const work of works) {
        await work(tx);
      }
    };
  }

  /** Every observer's outcomesSettled, in order; what they answered to do after the commit. */
  async outcomesSettled(tx: EntityManager, run: RunRef, outcomes: OutcomeList): Promise<AfterCommit[]> {
    const after: AfterCommit[] = [];
    if (!outcomes.length) {
      return after;
    }
    for (const observer of this.observers) {
      const then = await observer.outcomesSettled?.(tx, run, outcomes);
      if (then) {
        after.push(then);
      }
    }
    return after;
  }

  async resultsDeleted(tx: EntityManager, deleted: DeletedResults): Promise<void> {
    if (!deleted.testIds.length) {
      return;
    }
    for (const observer of this.observers) {
      await observer.resultsDeleted?.(tx, deleted);
    }
  }

  /** Every observer's runFinished, in order, in the transaction that finishes the run. */
  async runFinished(tx: EntityManager, run: { id: string; projectId: string }): Promise<void> {
    for (const observer of this.observers) {
      await observer.runFinished?.(tx, run);
    }
  }

  /** Whether any observer wants the stored results (so a writer may skip listing them). */
  get wantResults(): boolean {
    return this.observers.some((o) => o.resultsStored !== undefined);
  }

  /** Whether any observer wants the outcomes (so a writer may skip collecting them). */
  get wantOutcomes(): boolean {
    return this.observers.some((o) => o.outcomesSettled !== undefined);
  }
}
