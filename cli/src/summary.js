import { setTimeout as sleep } from 'node:timers/promises';
import { ApiError, usageError } from './errors.js';
import { scrubDeep } from './output.js';

/** New failures listed by name; the rest are counted. */
export const TOP_FAILURES = 10;
/** Flaky and quarantined tests checked against a run one by one up to this many; past it the run's results are read. */
const ONE_BY_ONE = 100;

/**
 * @typedef {{testId: number, suite: string, name: string}} TestRef
 * @typedef {{name: string, expected: unknown, actual: unknown, passed: boolean}} GateCondition
 * @typedef {{status: 'PASSED'|'FAILED'|'PENDING'|'OFF', evaluatedAt?: string, conditions?: GateCondition[],
 *   ignored?: {quarantined?: number | unknown[], knownIssues?: number | unknown[]}}} Gate
 * @typedef {object} Summary
 * @property {{id: number, projectId: number, name: string, status: string, stream?: string, url: string,
 *   counts: Record<string, number>, passRate: number | null}} run
 * @property {Gate | null} gate null: the service has no quality gate (older than API.md's "Quality gate")
 * @property {{compared: boolean, total: number, tests: (TestRef & {status: string, message: string | null})[]}} newFailures
 *   compared false: no run before in the stream, so the run's failures are listed instead
 * @property {{available: boolean, tests: TestRef[]}} flaky
 * @property {{available: boolean, tests: TestRef[]}} quarantined
 */

/**
 * passed ÷ (passed + failed + broken), as API.md defines the pass rate; null when none of them.
 * @param {Record<string, number>} counts
 */
export function passRateOf(counts) {
  const counted = (counts.passed ?? 0) + (counts.failed ?? 0) + (counts.broken ?? 0);
  return counted ? (counts.passed ?? 0) / counted : null;
}

/**
 * The run, or a usage error naming it when it is not there.
 * @param {import('./client.js').Client} client
 * @param {number} runId
 */
export async function getRun(client, runId) {
  try {
    return await client.json('GET', `api/runs/${runId}`);
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) {
      throw usageError(`Run ${runId} not found (or not visible with this token)`);
    }
    throw error;
  }
}

/**
 * The run's gate; null when the service has no gate endpoint. While the finished run's gate is PENDING (evaluated
 * just after the finish), it is asked again for up to `waitSeconds`.
 * @param {import('./client.js').Client} client
 * @param {number} runId
 * @param {number} waitSeconds
 * @returns {Promise<Gate | null>}
 */
export async function getGate(client, runId, waitSeconds) {
  const deadline = Date.now() + waitSeconds * 1000;
  for (let delay = 250; ; delay = Math.min(delay * 2, 2000)) {
    /** @type {Gate | undefined} */
    const gate = await client.optional(`api/runs/${runId}/gate`);
    if (!gate) {
      return null;
    }
    if (gate.status !== 'PENDING' || Date.now() + delay > deadline) {
      return gate;
    }
    const run = await getRun(client, runId);
    if (run.status !== 'FINISHED') {
      return gate;
    }
    await sleep(delay);
  }
}

/**
 * Everything the summary shows of a run, read through the public API: the run, its gate, its new failures (compare's
 * NEW_FAILURE against the run before in its stream; with no run before, its failures), and which flaky and quarantined
 * tests of the project ran in it. What an older service lacks is marked unavailable rather than failing the command.
 * @param {import('./client.js').Client} client
 * @param {number} runId
 * @param {{gateWaitSeconds?: number}} [options]
 * @returns {Promise<Summary>}
 */
export async function gatherSummary(client, runId, options = {}) {
  const run = await getRun(client, runId);
  const [gate, newFailures, health] = await Promise.all([
    getGate(client, runId, options.gateWaitSeconds ?? 0),
    newFailuresOf(client, run),
    healthOf(client, run),
  ]);
  return scrubDeep({
    run: {
      id: run.id,
      projectId: run.projectId,
      name: run.name,
      status: run.status,
      stream: run.stream,
      url: client.webUrl(`runs/${run.id}`),
      counts: run.counts,
      passRate: passRateOf(run.counts),
    },
    gate,
    newFailures,
    ...health,
  });
}

/**
 * @param {import('./client.js').Client} client
 * @param {any} run
 */
async function newFailuresOf(client, run) {
  const failing = (run.counts.failed ?? 0) + (run.counts.broken ?? 0);
  if (!failing) {
    return { compared: run.newFailures !== null, total: 0, tests: [] };
  }
  const compare = await client.json('GET', `api/runs/${run.id}/compare`);
  if (compare.base) {
    const page = await client.json('GET', `api/runs/${run.id}/compare/tests`, {
      query: { change: 'NEW_FAILURE', size: TOP_FAILURES },
    });
    return {
      compared: true,
      total: compare.summary.newFailures,
      tests: page.content.map((/** @type {any} */ t) => ({
        testId: t.testId,
        suite: t.suite,
        name: t.name,
        status: t.headStatus,
        message: t.message,
      })),
    };
  }
  // The first run of its stream: nothing to compare with, so every failure is shown as it is.
  const page = await client.json('GET', `api/runs/${run.id}/results`, {
    query: { status: 'FAILED,BROKEN', size: TOP_FAILURES },
  });
  return {
    compared: false,
    total: page.totalElements,
    tests: page.content.map((/** @type {any} */ r) => ({
      testId: r.testId,
      suite: r.suite,
      name: r.name,
      status: r.status,
      message: r.message,
    })),
  };
}

/**
 * The project's flaky and quarantined tests that ran in the run. From the test list's `state` filter (API.md, "Test
 * health"); a service without it answers 400, and then the quarantine list and compare's FLAKY stand in.
 * @param {import('./client.js').Client} client
 * @param {any} run
 * @returns {Promise<{flaky: Summary['flaky'], quarantined: Summary['quarantined']}>}
 */
async function healthOf(client, run) {
  const path = `api/projects/${run.projectId}/tests`;
  /** @type {any[] | undefined} */
  let tests;
  try {
    tests = (await client.all(path, { state: 'FLAKY,QUARANTINED' }, 2000)).items;
  } catch (error) {
    if (!(error instanceof ApiError && error.status === 400)) {
      throw error;
    }
  }
  if (tests?.some((t) => t.state === undefined)) {
    // A service that ignored the filter: its list says nothing of state.
    tests = undefined;
  }
  if (tests) {
    const ran = await ranInRun(client, run, tests);
    const ref = (/** @type {any} */ t) => ({ testId: t.id, suite: t.suite, name: t.name });
    return {
      flaky: { available: true, tests: ran.filter((t) => t.state === 'FLAKY').map(ref) },
      quarantined: { available: true, tests: ran.filter((t) => t.state === 'QUARANTINED').map(ref) },
    };
  }
  const [quarantine, flakyHere] = await Promise.all([
    client
      .all(`api/projects/${run.projectId}/quarantine`, {}, 2000)
      .then((q) => q.items)
      .catch((error) => {
        if (error instanceof ApiError && error.status === 404) {
          return undefined;
        }
        throw error;
      }),
    client.all(`api/runs/${run.id}/compare/tests`, { change: 'FLAKY' }, 500).then((c) => c.items),
  ]);
  const quarantined = quarantine
    ? await ranInRun(
        client,
        run,
        quarantine.map((q) => ({ id: q.testId, suite: q.suite, name: q.name })),
      )
    : [];
  return {
    flaky: {
      available: true,
      tests: flakyHere.map((t) => ({ testId: t.testId, suite: t.suite, name: t.name })),
    },
    quarantined: {
      available: Boolean(quarantine),
      tests: quarantined.map((t) => ({ testId: t.id, suite: t.suite, name: t.name })),
    },
  };
}

/**
 * Which of `tests` (test cases, by `id`) have a result in the run: each looked up among the run's results by its
 * suite and name when they are few, else the run's results read page by page.
 * @template {{id: number, suite: string, name: string}} T
 * @param {import('./client.js').Client} client
 * @param {any} run
 * @param {T[]} tests
 * @returns {Promise<T[]>}
 */
async function ranInRun(client, run, tests) {
  if (!tests.length) {
    return [];
  }
  const path = `api/runs/${run.id}/results`;
  /** @type {Set<number>} */
  const ran = new Set();
  if (tests.length <= ONE_BY_ONE) {
    const queue = [...tests];
    const worker = async () => {
      for (let test = queue.shift(); test; test = queue.shift()) {
        const query = {
          q: [...test.name].slice(0, 200).join(''),
          ...(test.suite.length <= 1000 ? { suite: test.suite } : {}),
        };
        const { items } = await client.all(path, query, 2000);
        if (items.some((r) => r.testId === test.id)) {
          ran.add(test.id);
        }
      }
    };
    await Promise.all([worker(), worker(), worker(), worker()]);
  } else {
    const { items } = await client.all(path, {}, run.counts.total ?? 100_000);
    items.forEach((r) => ran.add(r.testId));
  }
  return tests.filter((t) => ran.has(t.id));
}
