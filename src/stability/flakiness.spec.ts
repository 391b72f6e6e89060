import type { ResultStatus } from '../results/entities.js';
import { STATUS_BITS } from '../results/attempts.js';
import {
  type FlakyPolicy,
  NO_COMMIT,
  type RunOutcome,
  type TestHealth,
  applyOutcome,
  judge,
  newHealth,
  plainFailure,
  quarantined,
  skip,
  stateOf,
} from './flakiness.js';

const POLICY: FlakyPolicy = {
  window: 30,
  minRuns: 5,
  flipRate: 0.2,
  autoQuarantine: false,
  releaseAfterPasses: 3,
};
const NOW = new Date('2026-11-26T12:00:00Z');

let nextRun = 1;
function outcome(
  status: ResultStatus,
  over: Partial<RunOutcome> & { others?: ResultStatus[] } = {},
): RunOutcome {
  const { others = [], ...rest } = over;
  return {
    run: String(nextRun++),
    stream: 's',
    commit: NO_COMMIT,
    startedAt: new Date(NOW.getTime() - 1000),
    status,
    otherStatuses: others.reduce((bits, s) => bits | STATUS_BITS[s], 0),
    ...rest,
  };
}

/** The health after the outcomes, one after the other. */
function history(outcomes: RunOutcome[], policy: FlakyPolicy = POLICY, from: TestHealth = newHealth(NOW)) {
  let h = from;
  const transitions = [];
  for (const o of outcomes) {
    const next = applyOutcome(h, o, policy, NOW);
    h = next.health;
    transitions.push(next.transitions);
  }
  return { h, transitions };
}

const statuses = (text: string) =>
  [...text].map((c) => ({ P: 'PASSED', F: 'FAILED', B: 'BROKEN', S: 'SKIPPED' })[c] as ResultStatus);

describe('flakiness rules', () => {
  beforeEach(() => (nextRun = 1));

  it('one run: no flake rate, not flaky, HEALTHY or FAILING by its status', () => {
    const passed = history([outcome('PASSED')]).h;
    expect(passed).toEqual(
      expect.objectContaining({ runs: 1, flakeRate: null, flaky: false, state: 'HEALTHY' }),
    );
    const failed = history([outcome('FAILED')]).h;
    expect(failed).toEqual(
      expect.objectContaining({ runs: 1, flakeRate: null, flaky: false, state: 'FAILING' }),
    );
    expect(failed.lastFailedAt).toEqual(new Date(NOW.getTime() - 1000));
  });

  it('all skipped: no run counts, no flake rate, last status SKIPPED', () => {
    const { h } = history(statuses('SSSSSS').map((s) => outcome(s)));
    expect(h).toEqual(
      expect.objectContaining({
        runs: 0,
        flakeRate: null,
        flaky: false,
        lastStatus: 'SKIPPED',
        state: 'HEALTHY',
      }),
    );
    expect(h.entries).toEqual([]);
  });

  it('skipped runs are ignored between flips: P S F counts one flip over two runs', () => {
    const { h } = history(statuses('PSF').map((s) => outcome(s)));
    expect(h.runs).toBe(2);
    expect(h.flakeRate).toBe(1);
    expect(h.flaky).toBe(false); // fewer runs than minRuns, no commit, no mixed run
  });

  it('(c) a flip rate exactly at the threshold is flaky, just under is not', () => {
    // 6 runs, 1 flip: 1/5 = 0.2
    const at = history(statuses('PPPPPF').map((s) => outcome(s))).h;
    expect(at.flakeRate).toBe(0.2);
    expect(at.flaky).toBe(true);
    // 7 runs, 1 flip: 1/6 < 0.2
    nextRun = 1;
    const under = history(statuses('PPPPPPF').map((s) => outcome(s))).h;
    expect(under.flakeRate).toBeCloseTo(1 / 6);
    expect(under.flaky).toBe(false);
    // a threshold that is not a binary fraction: 3 flips of 30 runs at 0.1
    nextRun = 1;
    const tenth = history(
      statuses('PFPF' + 'F'.repeat(26)).map((s) => outcome(s)),
      { ...POLICY, window: 31, flipRate: 3 / 29 },
    ).h;
    expect(tenth.flakeRate).toBe(3 / 29);
    expect(tenth.flaky).toBe(true);
  });

  it('(c) needs minRuns runs in the window', () => {
    const four = history(statuses('PFPF').map((s) => outcome(s))).h;
    expect(four.flakeRate).toBe(1);
    expect(four.flaky).toBe(false);
    const five = applyOutcome(four, outcome('PASSED'), POLICY, NOW);
    expect(five.health.flaky).toBe(true);
    expect(five.transitions.becameFlaky).toBe(true);
  });

  it('(c) flips count between consecutive runs of the same stream only', () => {
    const { h } = history([
      outcome('PASSED', { stream: 'a' }),
      outcome('FAILED', { stream: 'b' }),
      outcome('PASSED', { stream: 'a' }),
      outcome('FAILED', { stream: 'b' }),
      outcome('PASSED', { stream: 'a' }),
      outcome('FAILED', { stream: 'b' }),
    ]);
    expect(h.runs).toBe(6);
    expect(h.flakeRate).toBe(0);
    expect(h.flaky).toBe(false);
  });

  it('the window boundary: flips that left the window no longer count', () => {
    const policy = { ...POLICY, window: 5, minRuns: 5 };
    const flaky = history(
      statuses('PFPPP').map((s) => outcome(s)),
      policy,
    ).h;
    expect(flaky.flakeRate).toBe(0.5);
    expect(flaky.flaky).toBe(true);
    const later = applyOutcome(flaky, outcome('PASSED'), policy, NOW).health; // F P P P P: one flip of 4
    expect(later.runs).toBe(5);
    expect(later.flakeRate).toBe(0.25);
    const gone = applyOutcome(later, outcome('PASSED'), policy, NOW).health; // P P P P P
    expect(gone.entries.map((e) => e.run)).toEqual(['3', '4', '5', '6', '7']);
    expect(gone.flakeRate).toBe(0);
    expect(gone.flaky).toBe(false);
  });

  it('(a) failed and passed in one run: a retry that passed, or two results of it in one run', () => {
    const retried = history([outcome('PASSED', { others: ['FAILED'] })]).h;
    expect(retried.flaky).toBe(true);
    expect(retried.runs).toBe(1);
    // A later batch of the same run replaces the run's entry: the run counts once.
    nextRun = 1;
    const first = outcome('FAILED');
    const h1 = history([first]).h;
    const h2 = applyOutcome(
      h1,
      { ...first, status: 'PASSED', otherStatuses: STATUS_BITS.FAILED },
      POLICY,
      NOW,
    );
    expect(h2.health.runs).toBe(1);
    expect(h2.health.flaky).toBe(true);
    expect(h2.transitions.becameFlaky).toBe(true);
    expect(h2.health.lastStatus).toBe('PASSED');
  });

  it('(b) passed and failed on one commit; runs without a commit never match each other', () => {
    const same = history([outcome('PASSED', { commit: 'c1' }), outcome('FAILED', { commit: 'c1' })]).h;
    expect(same.flaky).toBe(true);
    const other = history([outcome('PASSED', { commit: 'c1' }), outcome('FAILED', { commit: 'c2' })]).h;
    expect(other.flaky).toBe(false);
    const none = history([outcome('PASSED'), outcome('FAILED')]).h;
    expect(none.flaky).toBe(false);
  });

  it('orders a late run by its id, and takes the last status from the newest run', () => {
    const first = outcome('PASSED');
    const second = outcome('PASSED');
    const late = { ...outcome('FAILED'), run: '0' };
    const { h } = history([first, second, late]);
    expect(h.entries.map((e) => e.run)).toEqual(['0', '1', '2']);
    expect(h.lastStatus).toBe('PASSED');
    expect(h.state).toBe('HEALTHY');
  });

  it('auto-quarantines on the transition, releases after releaseAfterPasses passing runs, and waits for a new failure', () => {
    const policy = { ...POLICY, autoQuarantine: true, releaseAfterPasses: 3 };
    const { h, transitions } = history(
      [outcome('PASSED', { commit: 'c' }), outcome('FAILED', { commit: 'c' })],
      policy,
    );
    expect(transitions[1]).toEqual({ becameFlaky: true, quarantined: true, released: null });
    expect(h.state).toBe('QUARANTINED');
    expect(h.quarantine).toEqual(expect.objectContaining({ auto: true, byUserId: null, until: null }));
    // Two passes, a failure (the count starts again), then three passes.
    const after = history(
      statuses('PPFPP').map((s) => outcome(s)),
      policy,
      h,
    );
    expect(after.h.state).toBe('QUARANTINED');
    expect(after.h.passes).toBe(2);
    const third = applyOutcome(after.h, outcome('PASSED'), policy, NOW);
    expect(third.transitions.released).toBe('PASSES');
    expect(third.health.quarantine).toBeNull();
    expect(third.health.state).toBe('FLAKY'); // the evidence is still in the window
    // Passing again does not quarantine it again; a new failure does.
    const pass = applyOutcome(third.health, outcome('PASSED'), policy, NOW);
    expect(pass.transitions.quarantined).toBe(false);
    const fail = applyOutcome(pass.health, outcome('FAILED'), policy, NOW);
    expect(fail.transitions.quarantined).toBe(true);
    expect(fail.health.state).toBe('QUARANTINED');
  });

  it('a run counts once for release: a later passing batch of the same run adds no pass', () => {
    const policy = { ...POLICY, autoQuarantine: true, releaseAfterPasses: 2 };
    const start = quarantined(
      newHealth(NOW),
      { since: NOW, reason: 'r', auto: true, byUserId: null, until: null },
      NOW,
    );
    const run = outcome('PASSED');
    const once = applyOutcome(start, run, policy, NOW).health;
    const again = applyOutcome(once, run, policy, NOW).health;
    expect(again.passes).toBe(1);
    expect(again.state).toBe('QUARANTINED');
  });

  it('keeps a manual quarantine however many passes, and ends any quarantine whose until passed', () => {
    const manual = quarantined(
      newHealth(NOW),
      { since: NOW, reason: 'r', auto: false, byUserId: '7', until: null },
      NOW,
    );
    const { h } = history(
      statuses('PPPPP').map((s) => outcome(s)),
      POLICY,
      manual,
    );
    expect(h.state).toBe('QUARANTINED');
    const expiring = quarantined(
      newHealth(NOW),
      { since: NOW, reason: 'r', auto: false, byUserId: '7', until: new Date(NOW.getTime() - 1) },
      new Date(NOW.getTime() - 1000),
    );
    expect(stateOf(expiring, NOW)).toBe('HEALTHY');
    const next = applyOutcome(expiring, outcome('PASSED'), POLICY, NOW);
    expect(next.transitions.released).toBe('EXPIRED');
    expect(next.health.quarantine).toBeNull();
  });

  it('judge over hand-made windows', () => {
    const e = (run: number, status: ResultStatus, commit = NO_COMMIT) => ({
      run: String(run),
      bits: (STATUS_BITS[status] << 4) | STATUS_BITS[status],
      stream: 's',
      commit,
    });
    expect(judge([], POLICY)).toEqual({ runs: 0, flakeRate: null, flaky: false, why: null });
    expect(judge([e(1, 'PASSED'), e(2, 'BROKEN')], POLICY).flakeRate).toBe(1);
    expect(judge([e(1, 'PASSED', 'x'), e(2, 'BROKEN', 'x')], POLICY).why).toBe(
      'failed and passed on one commit',
    );
  });
});

describe('plainFailure', () => {
  it('is a failure or a breakage with no attempt that passed', () => {
    const { PASSED, FAILED, BROKEN, SKIPPED } = STATUS_BITS;
    expect(plainFailure({ status: 'FAILED', otherStatuses: 0 })).toBe(true);
    expect(plainFailure({ status: 'BROKEN', otherStatuses: FAILED | SKIPPED })).toBe(true);
    expect(plainFailure({ status: 'FAILED', otherStatuses: BROKEN })).toBe(true);
    expect(plainFailure({ status: 'FAILED', otherStatuses: PASSED })).toBe(false);
    expect(plainFailure({ status: 'BROKEN', otherStatuses: PASSED | FAILED })).toBe(false);
    expect(plainFailure({ status: 'PASSED', otherStatuses: 0 })).toBe(false);
    expect(plainFailure({ status: 'SKIPPED', otherStatuses: 0 })).toBe(false);
  });
});

describe('skip', () => {
  it('is a SKIPPED outcome, which moves a test that never ran by its last status, last run and first seen only', () => {
    expect(skip({ status: 'SKIPPED' })).toBe(true);
    expect(skip({ status: 'PASSED' })).toBe(false);
    const first = outcome('SKIPPED');
    const never = applyOutcome(newHealth(NOW), first, POLICY, NOW).health;
    const again = outcome('SKIPPED', { startedAt: new Date(NOW.getTime() - 5000) });
    const { health, transitions } = applyOutcome(never, again, POLICY, NOW);
    expect(health).toEqual({
      ...never,
      lastStatus: 'SKIPPED',
      lastRunId: again.run,
      firstSeenAt: again.startedAt,
    });
    expect(transitions).toEqual({ becameFlaky: false, quarantined: false, released: null });
  });
});
