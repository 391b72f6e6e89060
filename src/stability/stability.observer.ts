import { Injectable, Optional } from '@nestjs/common';
import { EventEmitter2 } from '@nestjs/event-emitter';
import type { EntityManager } from 'typeorm';
import { AUDIT_EVENT, type AuditRecord } from '../audit/audit.events.js';
import { NotificationOutbox } from '../notifications/notification-outbox.js';
import { STATUS_BITS } from '../results/attempts.js';
import type {
  AfterCommit,
  DeletedResults,
  OutcomeList,
  ResultsObserver,
  RunRef,
  TestOutcome,
} from '../results/results-observers.js';
import { FlakyPolicyCache } from './flaky-policy.cache.js';
import {
  type FlakyPolicy,
  type RunOutcome,
  type TestHealth,
  type Transitions,
  applyOutcome,
  failingSteadily,
  newHealth,
} from './flakiness.js';
import { healthChangesSince, logHealthChanges } from './health-changes.js';
import { commitKey, textKey } from './health-keys.js';
import { STABILITY_EVENT, type StabilityEvent } from './stability.events.js';
import { recountHealth } from './health-recount.js';
import { SETTLED, SettledTests } from './settled-tests.js';
import {
  type HealthRead,
  type HealthWrite,
  PLAIN_FAILURE,
  type RunEntry,
  TestHealthRepository,
  entryParts,
  outcomeCode,
} from './test-health.repository.js';

/** Tests settled by one statement at most. */
const SLICE = 5000;

/** How often a batch whose tests a concurrent writer changed or inserted first is weighed again. */
const MAX_TRIES = 5;

/**
 * Test health as results are written (API.md, "Test health"): for each test a write settled, inside its
 * transaction, the test's kept state is read, the outcome applied (flakiness.ts) and the state stored: one SELECT of
 * the batch's rows and one UPDATE (plus one INSERT for tests seen for the first time). The UPDATE writes a row only
 * if it is still the version read (optimistic: no row locks to take and record for a whole batch); a test a
 * concurrent writer changed meanwhile is locked (SELECT … FOR UPDATE) and weighed again.
 * The common case writes nothing: a plain pass of a steady test (one that ran and passed in every run of its window,
 * its second run included) changes only its window, which its results already record, so the read picks those tests
 * out of the batch and only the others are stored; a steady test's window is read back from its outcomes when it next
 * needs it (`caughtUp`: a failure, a skip, a person's quarantine). The next most common case, a plain failure of a
 * test failing steadily (flakiness.ts, `plainFailure`), moves only its window, run count, last run and last failure,
 * and a skip of a test that never ran (`skip`: a disabled test) only its last status and run: the read's own statement
 * applies those in SQL (under the row's lock, to the row as it is then), so that such a test is neither answered,
 * weighed nor written back (a CPU profile of the bench's V1 rerun: ~2 ms of the service's CPU a batch of 1,000
 * results, a tenth failing). A test that turned flaky or was quarantined owes its notification in
 * the same transaction; live events, audit records and the notification's announcement follow the commit.
 *
 * Each replica also remembers the tests it read settled (settled-tests.ts): in a later run, a plain pass of a steady
 * test is not read at all, and a plain failure of a test failing steadily is not written within the hour and not read
 * after it; a write that ends either (or a person's quarantine, a retention recount) logs the tests for every
 * replica (test_health_changes), which each write reads first. A CI run repeating a stable suite then costs its
 * health one probe of that log a batch, and a few writes an hour.
 *
 * One race is left: a plain pass written while another run's write, not yet seeing it, catches up the same test
 * (its first failure after a steady streak, in two runs written at once) is missing from that test's window until
 * the window moves past it. Runs of one stream are written one after the other in practice, but the legs of a matrix
 * build (runs of several streams at once, from a suite's second run on) meet it when a test fails in one leg and
 * passes in another: its window then lacks that pass (one flip more than the truth, at most, until the pass leaves the
 * window). Closing it would mean locking every passing test's row again, which is the cost this path exists to avoid.
 * In the same way, a plain failure left unwritten while another replica writes a later run of the same test can be
 * missing from its run count, and a change logged while a write is under way is not yet heard of by that write.
 */
@Injectable()
export class StabilityObserver implements ResultsObserver {
  constructor(
    private readonly health: TestHealthRepository,
    private readonly policies: FlakyPolicyCache,
    private readonly events: EventEmitter2,
    private readonly notifications: NotificationOutbox,
    @Optional() private readonly settled?: SettledTests,
  ) {}

  /** The transactions that logged changes of settled tests (logHealthChanges). */
  private readonly logged = new WeakSet<EntityManager>();

  /**
   * Results deleted by retention or a run's deletion (src/retention/): each test case that lost results has its
   * window, flakiness, last status and state recounted from the outcomes it has left, in the purge batch's
   * transaction (health-recount.ts). Its quarantine stays as it is.
   */
  async resultsDeleted(tx: EntityManager, deleted: DeletedResults): Promise<void> {
    await recountHealth(tx, deleted.projectId, deleted.testIds, deleted);
  }

  async outcomesSettled(
    tx: EntityManager,
    run: RunRef,
    outcomes: OutcomeList,
  ): Promise<AfterCommit | undefined> {
    const policy = await this.policies.get(tx, run.projectId);
    const known = await this.runOf(tx, run);
    const now = new Date();
    const told: { testId: string; transitions: Transitions; health: TestHealth }[] = [];
    const write: HealthWriteState = {
      // Not in a transaction that logged changes already (a V2 transaction writes several runs): the log it reads
      // holds its own entries, which are not committed, and may never be.
      settledAt:
        this.settled?.enabled && !this.logged.has(tx) ? await this.settledUpTo(tx, run.projectId) : undefined,
      steady: [],
      failed: [],
      broken: [],
      changed: new Set(),
    };
    // An import's finish gives every test of its run: a slice at a time, so that no statement carries 100,000 rows.
    // Two slices' reads are under way at a time: the next one's statement is queued on the connection while this
    // one's runs, so that Node prepares and weighs one slice while PostgreSQL reads another.
    const reads: Promise<SliceRead | undefined>[] = [];
    let at = 0;
    const readNext = () => {
      if (at < outcomes.length) {
        const read = this.readSlice(tx, run, outcomes.slice(at, at + SLICE), known, policy, now, told, write);
        // Awaited in turn, or settled on an error (below); no unhandled rejection meanwhile.
        read.catch(() => undefined);
        reads.push(read);
        at += SLICE;
      }
    };
    readNext();
    readNext();
    for (let read = reads.shift(); read; read = reads.shift()) {
      let slice: SliceRead | undefined;
      try {
        slice = await read;
      } catch (error) {
        // The reads after it were sent after it: its error is the first. None is left running past this write.
        await Promise.allSettled(reads);
        throw error;
      }
      readNext();
      if (slice) {
        try {
          await this.weigh(tx, run, slice, known, policy, now, told, write);
        } catch (error) {
          // The reads under way were sent before this slice's statements: when one of them failed (a deadlock, a
          // lock timeout), these failed only as "transaction is aborted", and its error is the one to tell (a
          // deadlock is retried, an aborted transaction is not).
          const earlier = (await Promise.allSettled(reads)).find((r) => r.status === 'rejected');
          throw earlier ? earlier.reason : error;
        }
      }
    }
    if (write.changed.size) {
      await logHealthChanges(tx, run.projectId, [...write.changed]);
      this.logged.add(tx);
    }
    const remember = this.remembering(run, known, write);
    if (!told.length) {
      return remember;
    }
    await this.owe(tx, run, told);
    return () => {
      remember?.();
      this.tell(run, told);
    };
  }

  /**
   * Brings what this process remembers of the project's settled tests up to the project's changes (settled-tests.ts):
   * answers the last change it knows of now.
   */
  private async settledUpTo(tx: EntityManager, projectId: string): Promise<string> {
    const { top, changes } = await healthChangesSince(tx, projectId, this.settled!.known(projectId));
    this.settled!.apply(projectId, top, changes);
    return top;
  }

  /** What to remember of the tests this write read settled, once it has committed (settled-tests.ts). */
  private remembering(
    run: RunRef,
    known: Pick<RunOutcome, 'run' | 'startedAt'>,
    write: HealthWriteState,
  ): AfterCommit | undefined {
    const { settledAt, steady, failed, broken } = write;
    if (settledAt === undefined || !(steady.length + failed.length + broken.length)) {
      return undefined;
    }
    return () =>
      this.settled!.remember(run.projectId, settledAt, Number(known.run), known.startedAt.getTime(), {
        steady,
        failed,
        broken,
      });
  }

  /**
   * The outcomes applied to their tests' kept state (see outcomesSettled), in two steps: `readSlice` stores the tests the
   * write created and reads the others' rows (applying what SQL applies), `weigh` applies the rest in Node. The tests
   * whose change is to be told (turned flaky, quarantined, released) are added to `told`, and only those: an import's
   * finish settles every test of its run, and keeping each one's health until the end held a 1,000,000-test report's
   * whole state (the service's peak RSS went from ~290 MB to ~930 MB). Answers what is left to weigh, if anything.
   */
  private async readSlice(
    tx: EntityManager,
    run: RunRef,
    outcomes: readonly TestOutcome[],
    known: Pick<RunOutcome, 'run' | 'stream' | 'commit' | 'startedAt'>,
    policy: FlakyPolicy,
    now: Date,
    told: { testId: string; transitions: Transitions; health: TestHealth }[],
    write: HealthWriteState,
  ): Promise<SliceRead | undefined> {
    let pending: readonly TestOutcome[] = outcomes;
    if (outcomes.some((o) => o.created)) {
      // Tests the write created: no row to read, lock or update, and none another writer could insert first (see
      // TestOutcome.created): inserted as they are, without a look for them nor ON CONFLICT. A new test's state
      // follows from its outcome alone (its status and its other attempts' statuses) in this run under this policy:
      // weighed once an outcome, and the tests of one outcome share it (insertNew writes its row's text once).
      const inserts: HealthWrite[] = [];
      const byOutcome = new Map<string, { health: TestHealth; transitions: Transitions }>();
      for (const o of outcomes) {
        if (o.created) {
          const key = `${o.status}${o.otherStatuses}`;
          let weighed = byOutcome.get(key);
          if (!weighed) {
            const outcome: RunOutcome = { ...known, status: o.status, otherStatuses: o.otherStatuses };
            weighed = applyOutcome(newHealth(known.startedAt), outcome, policy, now);
            byOutcome.set(key, weighed);
          }
          inserts.push({ testId: o.testId, health: weighed.health });
          if (toTell(weighed.transitions)) {
            told.push({ testId: o.testId, transitions: weighed.transitions, health: weighed.health });
          }
        }
      }
      await this.health.insertNew(tx, run.projectId, inserts);
      pending = outcomes.filter((o) => !o.created);
      if (!pending.length) {
        return undefined;
      }
    }
    let codes = pending.map((o) => outcomeCode(o, policy.flipRate));
    const entry: RunEntry = { ...entryParts(known.run, known.stream, known.commit), window: policy.window };
    if (write.settledAt !== undefined) {
      ({ pending, codes } = await this.settle(tx, run, pending, codes, known, entry, write));
      if (!pending.length) {
        return undefined;
      }
    }
    // One read: plain passes of steady tests change nothing but their windows and are not written (see `steady`);
    // plain failures of tests failing steadily and skips of tests that never ran are applied by the same statement
    // (see `plainFailure`, `skip`, repeatsSql); the others are weighed and stored where their row is still as read
    // (else locked and weighed again).
    const read = await this.health.read(
      tx,
      pending.map((o) => o.testId),
      codes,
      known.run,
      known.startedAt,
      entry,
    );
    if (write.settledAt !== undefined) {
      write.steady.push(...read.quiet);
      pending.forEach((o, i) => {
        if (codes[i] >= PLAIN_FAILURE && read.repeated.has(o.testId)) {
          (failedKind(codes[i]) === SETTLED.BROKEN ? write.broken : write.failed).push(o.testId);
        }
      });
    }
    if (read.quiet.size || read.repeated.size) {
      pending = pending.filter((o) => !read.quiet.has(o.testId) && !read.repeated.has(o.testId));
    }
    return pending.length ? { pending, read } : undefined;
  }

  /**
   * The outcomes of tests this process knows settled (settled-tests.ts) taken out of `pending`: a plain pass of a
   * steady test is quiet; a plain failure of a test failing steadily with the same status as its last is not written
   * within LAG_MS of the run whose failure was (its row lags), and is otherwise applied (`applyRepeats`, which checks
   * its row again: one that is no longer so stays pending). Answers the outcomes left, with their codes.
   */
  private async settle(
    tx: EntityManager,
    run: RunRef,
    outcomes: readonly TestOutcome[],
    codes: number[],
    known: Pick<RunOutcome, 'run' | 'startedAt'>,
    entry: RunEntry,
    write: HealthWriteState,
  ): Promise<{ pending: TestOutcome[]; codes: number[] }> {
    const kindOf = this.settled!.forRun(run.projectId, Number(known.run), known.startedAt.getTime());
    if (!kindOf) {
      return { pending: [...outcomes], codes };
    }
    const pending: TestOutcome[] = [];
    const left: number[] = [];
    const failing: TestOutcome[] = [];
    const failingCodes: number[] = [];
    outcomes.forEach((o, i) => {
      const code = codes[i];
      const kind = kindOf(o.testId);
      if (kind !== undefined) {
        const settled = kind & ~SETTLED.RECENT;
        if (settled === SETTLED.STEADY) {
          if (code >> 4 === STATUS_BITS.PASSED) {
            return;
          }
        } else if (code >= PLAIN_FAILURE) {
          if ((kind & SETTLED.RECENT) === 0 || failedKind(code) !== settled) {
            failing.push(o);
            failingCodes.push(code);
          }
          return;
        }
      }
      pending.push(o);
      left.push(code);
    });
    if (failing.length) {
      const applied = await this.health.applyRepeats(
        tx,
        failing.map((o) => o.testId),
        failingCodes,
        known.run,
        known.startedAt,
        entry,
      );
      failing.forEach((o, i) => {
        if (applied.has(o.testId)) {
          (failedKind(failingCodes[i]) === SETTLED.BROKEN ? write.broken : write.failed).push(o.testId);
        } else {
          pending.push(o);
          left.push(failingCodes[i]);
        }
      });
    }
    return { pending, codes: left };
  }

  /** The outcomes `readSlice` left (its stored rows, and tests without one) weighed in Node and stored (see `readSlice`). */
  private async weigh(
    tx: EntityManager,
    run: RunRef,
    { pending: left, read }: SliceRead,
    known: Pick<RunOutcome, 'run' | 'stream' | 'commit' | 'startedAt'>,
    policy: FlakyPolicy,
    now: Date,
    told: { testId: string; transitions: Transitions; health: TestHealth }[],
    write: HealthWriteState,
  ): Promise<void> {
    let pending = left;
    let stored = read.stored;
    let versions: Map<string, string> | undefined = read.versions;
    for (let tries = 1; pending.length; tries++) {
      if (tries > 1) {
        stored = await this.health.lock(
          tx,
          pending.map((o) => o.testId),
        );
        versions = undefined;
      }
      await this.health.caughtUp(tx, run.projectId, stored, known.run);
      const updates: HealthWrite[] = [];
      const inserts: HealthWrite[] = [];
      const results: typeof told = [];
      for (const o of pending) {
        const before = stored.get(o.testId);
        const outcome: RunOutcome = { ...known, status: o.status, otherStatuses: o.otherStatuses };
        const { health, transitions } = applyOutcome(
          before ?? newHealth(known.startedAt),
          outcome,
          policy,
          now,
        );
        (before ? updates : inserts).push({ testId: o.testId, health, before });
        if (before && (before.lastStatus === 'PASSED' || failingSteadily(before))) {
          // It may have been steady or failing steadily: a replica may remember it so (settled-tests.ts).
          write.changed.add(o.testId);
        }
        results.push({ testId: o.testId, transitions, health });
      }
      const again = new Set([
        ...(await this.health.update(tx, updates, versions)),
        ...(await this.health.insert(tx, run.projectId, inserts)),
      ]);
      told.push(...results.filter((r) => !again.has(r.testId) && toTell(r.transitions)));
      if (again.size && tries >= MAX_TRIES) {
        throw new Error(`Test health of ${again.size} tests kept changing under this write`);
      }
      pending = pending.filter((o) => again.has(o.testId));
    }
  }

  /** The run's stream, commit and start (from the caller, else read). */
  private async runOf(
    tx: EntityManager,
    run: RunRef,
  ): Promise<Pick<RunOutcome, 'run' | 'stream' | 'commit' | 'startedAt'>> {
    let { stream, attributes, startedAt } = run;
    if (stream === undefined || attributes === undefined || startedAt === undefined) {
      const rows: { stream: string; attributes: Record<string, string>; started_at: Date }[] = await tx.query(
        'SELECT stream, attributes, started_at FROM runs WHERE id = $1',
        [run.id],
      );
      stream ??= rows[0]?.stream ?? '';
      attributes ??= rows[0]?.attributes ?? {};
      startedAt ??= rows[0]?.started_at ?? new Date();
    }
    return { run: String(run.id), stream: textKey(stream), commit: commitKey(attributes.commit), startedAt };
  }

  /**
   * The notifications the changes owe (test.flaky, test.quarantined), in the write's transaction: one row each, so
   * that a crash right after the commit loses none (announced after the commit, on STABILITY_EVENT). Rare: a test
   * turns flaky or is quarantined once in many runs.
   */
  private async owe(
    tx: EntityManager,
    run: RunRef,
    changed: { testId: string; transitions: Transitions; health: TestHealth }[],
  ): Promise<void> {
    for (const { testId, transitions, health } of changed) {
      const types = [
        ...(transitions.becameFlaky ? (['test.flaky'] as const) : []),
        ...(transitions.quarantined && health.quarantine ? (['test.quarantined'] as const) : []),
      ];
      for (const type of types) {
        await this.notifications.owe(
          {
            type,
            projectId: String(run.projectId),
            testId,
            runId: String(run.id),
            // One delivery per change: the run that made it so.
            key: `${type}:${testId}:run:${run.id}`,
          },
          tx,
        );
      }
    }
  }

  private tell(
    run: RunRef,
    changed: { testId: string; transitions: Transitions; health: TestHealth }[],
  ): void {
    for (const { testId, transitions, health } of changed) {
      const base = { projectId: String(run.projectId), testId, runId: String(run.id) };
      if (transitions.becameFlaky) {
        this.events.emit(STABILITY_EVENT, { ...base, event: 'test.flaky' } satisfies StabilityEvent);
      }
      if (transitions.released) {
        this.events.emit(STABILITY_EVENT, { ...base, event: 'test.released' } satisfies StabilityEvent);
        this.events.emit(AUDIT_EVENT, {
          type: 'TEST_RELEASED',
          actorId: null,
          target: `project:${run.projectId}`,
          details: {
            testId: Number(testId),
            auto: true,
            why: transitions.released === 'PASSES' ? 'passed in a row' : 'until passed',
            runId: Number(run.id),
          },
        } satisfies AuditRecord);
      }
      if (transitions.quarantined && health.quarantine) {
        this.events.emit(STABILITY_EVENT, { ...base, event: 'test.quarantined' } satisfies StabilityEvent);
        this.events.emit(AUDIT_EVENT, {
          type: 'TEST_QUARANTINED',
          actorId: null,
          target: `project:${run.projectId}`,
          details: {
            testId: Number(testId),
            auto: true,
            reason: health.quarantine.reason,
            runId: Number(run.id),
          },
        } satisfies AuditRecord);
      }
    }
  }
}

/** A slice of outcomes as `readSlice` left it: the outcomes to weigh in Node, and what was read of their tests. */
interface SliceRead {
  pending: readonly TestOutcome[];
  read: HealthRead;
}

/** The SETTLED kind a plain failure's code (OUTCOME) leaves its test. */
function failedKind(code: number): number {
  return code >> 4 === STATUS_BITS.BROKEN ? SETTLED.BROKEN : SETTLED.FAILED;
}

/** What one write of outcomes keeps across its slices for the settled tests (settled-tests.ts). */
interface HealthWriteState {
  /** The last change of the project's settled tests known before the write (undefined: none remembered). */
  settledAt: string | undefined;
  /** Tests read steady, to remember once committed. */
  steady: string[];
  /** Tests read failing steadily (their repeat applied), last FAILED or BROKEN, to remember once committed. */
  failed: string[];
  broken: string[];
  /** Tests whose change is to be logged for every replica's cache. */
  changed: Set<string>;
}

/** Whether a test's change is told (live events, audit records, the notifications it owes). */
function toTell(t: Transitions): boolean {
  return Boolean(t.becameFlaky || t.quarantined || t.released);
}
