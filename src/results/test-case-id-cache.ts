/** A test case id learned by a write: kept in the cache once the write's transaction has committed. */
export interface LearnedTestCase {
  projectId: string;
  suite: string;
  name: string;
  id: string;
}

/** One generation of the cache: project → suite → name → id, and how many ids it holds. */
interface Generation {
  size: number;
  projects: Map<string, Map<string, Map<string, string>>>;
}

const emptyGeneration = (): Generation => ({ size: 0, projects: new Map() });

/**
 * Test case ids by (project, suite, name) for tests identified by suite + name, from committed writes only,
 * so that a CI run repeating known tests costs no look-up (nor hashing: MD5 of 1000 names took ~0.9 ms).
 * Nested maps rather than one map of joined keys: no key string to build per result, and the few suites of
 * a batch keep their small name maps in the CPU cache (4x faster than one map of 200,000 joined keys).
 * Safe to keep: a test case keeps its id, and is deleted either with its project, whose runs go with it (a write
 * to such a run fails on the run), or by retention once it has no results left, which counts the deletion in
 * projects.tests_pruned: a writer reads that count under its lock before it uses the cache (see `pruned`). Two generations bound the memory: when the young one is full, it
 * becomes the old one.
 */
export class TestCaseIdCache {
  private young = emptyGeneration();
  private old = emptyGeneration();
  /** Each project's count of test case deletions (projects.tests_pruned) when its ids were last checked. */
  private readonly prunedCounts = new Map<string, string>();

  constructor(private readonly capacity: number) {}

  /**
   * The project's test case deletions as a writer read them under its lock (see test-case-guard.ts): when they
   * changed since the last check, the project's cached ids are forgotten (some may name deleted test cases).
   */
  pruned(projectId: string, count: string): void {
    const known = this.prunedCounts.get(projectId);
    if (known === count) {
      return;
    }
    this.prunedCounts.set(projectId, count);
    if (known === undefined && count === '0') {
      return;
    }
    for (const generation of [this.young, this.old]) {
      const suites = generation.projects.get(projectId);
      if (suites) {
        for (const names of suites.values()) {
          generation.size -= names.size;
        }
        generation.projects.delete(projectId);
      }
    }
  }

  get(projectId: string, suite: string, name: string): string | undefined {
    const id = this.young.projects.get(projectId)?.get(suite)?.get(name);
    if (id !== undefined) {
      return id;
    }
    const aged = this.old.projects.get(projectId)?.get(suite)?.get(name);
    if (aged !== undefined) {
      this.set(projectId, suite, name, aged);
    }
    return aged;
  }

  set(projectId: string, suite: string, name: string, id: string): void {
    const known = this.young.projects.get(projectId)?.get(suite);
    if (known?.has(name)) {
      known.set(name, id);
      return;
    }
    if (this.young.size >= this.capacity) {
      this.old = this.young;
      this.young = emptyGeneration();
    }
    let suites = this.young.projects.get(projectId);
    if (!suites) {
      suites = new Map();
      this.young.projects.set(projectId, suites);
    }
    let names = suites.get(suite);
    if (!names) {
      names = new Map();
      suites.set(suite, names);
    }
    names.set(name, id);
    this.young.size += 1;
  }
}
