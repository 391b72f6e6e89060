import { DEFAULT_SETTINGS } from '../common/project-settings.js';
import { evaluateGate, type GateSettings, type GateTally, passPercent } from './gate-conditions.js';

/** A hand-made run's tally: `ran` is every outcome unless given. */
function makeTally(overrides: Partial<GateTally> = {}): GateTally {
  const t = {
    passed: 0,
    failed: 0,
    broken: 0,
    skipped: 0,
    newFailures: 0,
    ignored: { quarantined: 0, knownIssues: 0 },
    ...overrides,
  };
  return { ran: t.passed + t.failed + t.broken + t.skipped, ...t, ...overrides };
}

/** Only the conditions named are set (the others null / false). */
function makeSettings(overrides: Partial<GateSettings> = {}): GateSettings {
  return { ...DEFAULT_SETTINGS.gate, maxFailed: null, ...overrides };
}

describe('evaluateGate', () => {
  it('is OFF when disabled, whatever the run had', () => {
    const sut = evaluateGate(makeSettings({ enabled: false, maxFailed: 0 }), makeTally({ failed: 5 }));
    expect(sut).toEqual({ status: 'OFF', conditions: [] });
  });

  it('passes with no condition set, and reports none', () => {
    expect(evaluateGate(makeSettings(), makeTally({ failed: 3 }))).toEqual({
      status: 'PASSED',
      conditions: [],
    });
  });

  it('counts failed and broken against maxFailed, and holds at the limit', () => {
    const settings = makeSettings({ maxFailed: 2 });
    expect(evaluateGate(settings, makeTally({ passed: 5, failed: 1, broken: 1 }))).toEqual({
      status: 'PASSED',
      conditions: [{ name: 'maxFailed', expected: 2, actual: 2, passed: true }],
    });
    expect(evaluateGate(settings, makeTally({ passed: 5, failed: 2, broken: 1, skipped: 4 }))).toEqual({
      status: 'FAILED',
      conditions: [{ name: 'maxFailed', expected: 2, actual: 3, passed: false }],
    });
  });

  it('takes the pass rate among passed, failed and broken, skipped left out', () => {
    const settings = makeSettings({ minPassRate: 75 });
    // 3 of 4 ran: 75 %, the 10 skipped do not lower it.
    expect(evaluateGate(settings, makeTally({ passed: 3, broken: 1, skipped: 10 })).conditions).toEqual([
      { name: 'minPassRate', expected: 75, actual: 75, passed: true },
    ]);
    // 2 of 3: 66.66 % shown (floored), below 66.67 on the exact rate.
    expect(evaluateGate(makeSettings({ minPassRate: 66.67 }), makeTally({ passed: 2, failed: 1 }))).toEqual({
      status: 'FAILED',
      conditions: [{ name: 'minPassRate', expected: 66.67, actual: 66.66, passed: false }],
    });
  });

  it('has no pass rate to fall short with nothing passed, failed or broken', () => {
    expect(evaluateGate(makeSettings({ minPassRate: 90 }), makeTally({ skipped: 2 })).conditions).toEqual([
      { name: 'minPassRate', expected: 90, actual: null, passed: true },
    ]);
  });

  it('counts every test that ran for minTotal, skipped and ignored ones included', () => {
    const settings = makeSettings({ minTotal: 5 });
    const tally = makeTally({
      passed: 2,
      skipped: 1,
      ran: 5,
      ignored: { quarantined: 1, knownIssues: 1 },
    });
    expect(evaluateGate(settings, tally).conditions).toEqual([
      { name: 'minTotal', expected: 5, actual: 5, passed: true },
    ]);
    expect(evaluateGate(settings, makeTally({ passed: 4 }))).toEqual({
      status: 'FAILED',
      conditions: [{ name: 'minTotal', expected: 5, actual: 4, passed: false }],
    });
  });

  it('checks new failures only when noNewFailures is on', () => {
    const tally = makeTally({ passed: 1, failed: 2, newFailures: 1 });
    expect(evaluateGate(makeSettings({ noNewFailures: false }), tally).conditions).toEqual([]);
    expect(evaluateGate(makeSettings({ noNewFailures: true }), tally)).toEqual({
      status: 'FAILED',
      conditions: [{ name: 'noNewFailures', expected: 0, actual: 1, passed: false }],
    });
    expect(evaluateGate(makeSettings({ noNewFailures: true }), makeTally({ failed: 2 })).status).toBe(
      'PASSED',
    );
  });

  it('reports every set condition in order and fails when any one fails', () => {
    const settings = makeSettings({ maxFailed: 5, minPassRate: 50, minTotal: 3, noNewFailures: true });
    const sut = evaluateGate(settings, makeTally({ passed: 1, failed: 2, newFailures: 0 }));
    expect(sut.status).toBe('FAILED');
    expect(sut.conditions.map((c) => [c.name, c.passed])).toEqual([
      ['maxFailed', true],
      ['minPassRate', false],
      ['minTotal', true],
      ['noNewFailures', true],
    ]);
  });

  it('goes by the defaults: no failure allowed', () => {
    expect(evaluateGate(DEFAULT_SETTINGS.gate, makeTally({ passed: 10 })).status).toBe('PASSED');
    expect(evaluateGate(DEFAULT_SETTINGS.gate, makeTally({ passed: 10, broken: 1 })).status).toBe('FAILED');
  });
});

describe('passPercent', () => {
  it('floors to two decimals and is null with nothing to rate', () => {
    expect(passPercent({ passed: 1, failed: 2, broken: 0 })).toBe(33.33);
    expect(passPercent({ passed: 199, failed: 1, broken: 0 })).toBe(99.5);
    expect(passPercent({ passed: 0, failed: 0, broken: 0 })).toBeNull();
  });
});
