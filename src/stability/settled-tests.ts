/** The tests a replica remembers at most, over its projects (about 60 bytes each). */
export const SETTLED_TESTS_CAPACITY = 500_000;

/**
 * What a process knows of a project's settled tests: the ones whose last outcome, read in a write, left them steady
 * (flakiness.ts, `steady`: a plain pass of such a test is quiet, nothing to write) or failing steadily
 * (`failingSteadily`: a plain failure of it only moves its window, run count, last run and last failure). A later
 * run's plain pass of a steady test is then known quiet without reading its row. A plain failure of a test failing
 * steadily, with its last status, is not written at all within LAG_MS of the run whose failure was written (the row
 * lags, as a steady test's does: the tests list and `caughtUp` read those runs back from the outcomes), and is
 * applied after that without reading the batch's other rows (test-health.repository.ts, `applyRepeats`).
 *
 * It stays true until the test's row changes otherwise, which only a write that leaves a steady test or a test
 * failing steadily (a failure, a pass, a skip, an attempt that failed or passed), a person's quarantine or release, or
 * a retention recount does: those log the tests in test_health_changes, in the transaction that changes them,
 * numbered in commit order (migration TestHealthChanges). Each write reads the entries after the last it knows
 * (`known`) and forgets those tests (`apply`) before it looks any up, so a process never uses what another replica
 * has changed since, but for a change committed while the write is under way: the same as a read of the row a
 * moment earlier, which the writer already allows for (stability.observer.ts, the race it leaves).
 *
 * A test is remembered with the run it was read in (its row's last run is before it) and that run's start (its row's
 * first seen is not after it): a later run, started no earlier, finds the row as the read did. Bounded: past
 * `capacity` tests, everything is forgotten and learned again.
 */
export class SettledTests {
  private readonly projects = new Map<string, ProjectTests>();
  private size = 0;

  /** `capacity` 0: nothing is remembered (SVC_HEALTH_SETTLED_CACHE=false). */
  constructor(private readonly capacity: number) {}

  get enabled(): boolean {
    return this.capacity > 0;
  }

  /** The number of the last change the project's tests were brought up to (undefined: nothing known of it). */
  known(projectId: string): string | undefined {
    return this.projects.get(projectId)?.n;
  }

  /**
   * The changes logged after `known` (in order, test ids null for every test): those tests are forgotten. A log that
   * does not follow on (its older entries deleted) forgets the project. `top` is the last number logged (changes
   * empty: nothing since). Never goes back: changes this process applied since the caller read them are skipped.
   */
  apply(
    projectId: string,
    top: string,
    changes: readonly { n: string; testIds: readonly string[] | null }[],
  ): void {
    const project = this.projects.get(projectId);
    if (!project) {
      this.projects.set(projectId, emptyProject(top));
      return;
    }
    // A write that read the log before another write of this process applied newer entries: those it has are known.
    let n = BigInt(project.n);
    for (const change of changes) {
      const number = BigInt(change.n);
      if (number <= n) {
        continue;
      }
      if (number !== n + 1n || change.testIds === null) {
        this.forget(projectId, top);
        return;
      }
      for (const id of change.testIds) {
        if (project.tests.delete(id)) {
          this.size--;
        }
      }
      n = number;
    }
    project.n = String(n);
  }

  /**
   * How the project's tests are known for run `run` started at `startedAt`: a test's kind (SETTLED) if it was read
   * so in an earlier run, started no later, with SETTLED.RECENT added when that run started less than LAG_MS before,
   * the same UTC day; else undefined (nothing known of the project: undefined).
   */
  forRun(
    projectId: string,
    run: number,
    startedAt: number,
  ): ((testId: string) => number | undefined) | undefined {
    const project = this.projects.get(projectId);
    if (!project?.tests.size) {
      return undefined;
    }
    // What each read the tests were remembered from is for this run (0: nothing): once a batch, not once a test.
    const day = Math.floor(startedAt / DAY_MS);
    const usable = new Uint8Array(project.reads.length);
    project.reads.forEach((read, i) => {
      usable[i] =
        read.run < run && read.startedAt <= startedAt
          ? startedAt - read.startedAt < LAG_MS && Math.floor(read.startedAt / DAY_MS) === day
            ? 2
            : 1
          : 0;
    });
    const tests = project.tests;
    return (testId) => {
      const value = tests.get(testId);
      if (value === undefined) {
        return undefined;
      }
      const use = usable[value >> 2];
      return use === 0 ? undefined : (value & 3) | (use === 2 ? SETTLED.RECENT : 0);
    };
  }

  /**
   * Tests read settled in run `run` (started at `startedAt`) by a write that knew the project up to change `n`: kept
   * only if the process still knows it up to that change (a change read since may be one the write did not see).
   */
  remember(
    projectId: string,
    n: string,
    run: number,
    startedAt: number,
    tests: { steady: readonly string[]; failed: readonly string[]; broken: readonly string[] },
  ): void {
    const project = this.projects.get(projectId);
    const count = tests.steady.length + tests.failed.length + tests.broken.length;
    if (!this.enabled || !project || project.n !== n || !count) {
      return;
    }
    let read = project.readOf.get(run);
    if (read === undefined) {
      if (project.reads.length >= MAX_READS) {
        this.forget(projectId, n);
        return;
      }
      read = project.reads.push({ run, startedAt }) - 1;
      project.readOf.set(run, read);
    }
    for (const [ids, kind] of [
      [tests.steady, SETTLED.STEADY],
      [tests.failed, SETTLED.FAILED],
      [tests.broken, SETTLED.BROKEN],
    ] as const) {
      const value = read * 4 + kind;
      for (const id of ids) {
        const before = project.tests.size;
        project.tests.set(id, value);
        this.size += project.tests.size - before;
      }
    }
    if (this.size > this.capacity) {
      this.projects.clear();
      this.size = 0;
    }
  }

  /** Forgets the project's tests. */
  private forget(projectId: string, top: string): void {
    const project = this.projects.get(projectId);
    if (project) {
      this.size -= project.tests.size;
    }
    this.projects.set(projectId, emptyProject(top));
  }
}

/**
 * How a test is known (SettledTests.forRun): steady, or failing steadily with its last status FAILED or BROKEN; and
 * RECENT, added to a kind when the run it was read in started less than LAG_MS before the one asking, the same day.
 */
export const SETTLED = { STEADY: 0, FAILED: 1, BROKEN: 2, RECENT: 4 } as const;

/**
 * How long a plain failure of a test failing steadily may go unwritten after the run whose failure was written: its
 * row then lags (its window, run count, last run and last failure: the list and `caughtUp` read those back from its
 * outcomes), and its last failure, which sorts the tests list by the day and then the instant, is that much early at
 * most, never on another day.
 */
export const LAG_MS = 3_600_000;
const DAY_MS = 86_400_000;

/** The reads (runs) a project's tests are remembered with at most: beyond, the project is learned again. */
const MAX_READS = 1000;

interface ProjectTests {
  /** The last change applied. */
  n: string;
  /** Each test: the index of the read it was remembered from (`reads`), times 4, plus its SETTLED kind. */
  tests: Map<string, number>;
  /** The run and start (epoch ms) of each read tests were remembered from. */
  reads: { run: number; startedAt: number }[];
  /** The index in `reads` of each run's. */
  readOf: Map<number, number>;
}

const emptyProject = (n: string): ProjectTests => ({ n, tests: new Map(), reads: [], readOf: new Map() });
