import { type Attempt, after, planAttempts, type StoredOutcome } from './attempts.js';

const attempt = (
  id: string,
  testId: string,
  status: Attempt['status'],
  retry = 0,
  startedAt: number | null = null,
): Attempt => ({
  id,
  testId,
  status,
  retry,
  startedAt,
});

describe('attempts', () => {
  it('orders attempts by retry, then start (none first), then arrival', () => {
    expect(after(attempt('1', 't', 'PASSED', 1), attempt('2', 't', 'FAILED', 0))).toBe(true);
    expect(after(attempt('2', 't', 'PASSED', 0, 10), attempt('1', 't', 'FAILED', 0, 20))).toBe(false);
    expect(after(attempt('1', 't', 'PASSED', 0, 10), attempt('2', 't', 'FAILED', 0, null))).toBe(true);
    expect(after(attempt('10', 't', 'PASSED'), attempt('9', 't', 'FAILED'))).toBe(true);
  });

  it('takes the last attempt of a batch as the outcome, counting a pass after a failure as passed on retry', () => {
    const plan = planAttempts(
      [attempt('1', 'a', 'FAILED', 0), attempt('2', 'a', 'PASSED', 1), attempt('3', 'b', 'SKIPPED')],
      new Map(),
    );
    expect(plan.rows).toEqual([
      { outcome: false, attempts: 1, otherStatuses: 0 },
      { outcome: true, attempts: 2, otherStatuses: 2 },
      { outcome: true, attempts: 1, otherStatuses: 0 },
    ]);
    expect(plan.delta).toEqual({
      total: 2,
      passed: 1,
      failed: 0,
      broken: 0,
      skipped: 1,
      passedOnRetry: 1,
      attempts: 3,
    });
    expect(plan.repeats).toBe(true);
    expect(planAttempts([attempt('1', 'a', 'FAILED')], new Map()).repeats).toBe(false);
  });

  it('moves the counts when a later attempt supersedes a stored outcome', () => {
    const stored = new Map<string, StoredOutcome>([
      ['a', { ...attempt('5', 'a', 'FAILED'), attempts: 1, otherStatuses: 0 }],
    ]);
    const plan = planAttempts([attempt('9', 'a', 'PASSED', 1)], stored);
    expect(plan.rows).toEqual([{ outcome: true, attempts: 2, otherStatuses: 2 }]);
    expect(plan.updates).toEqual([{ id: '5', testId: 'a', outcome: false, attempts: 1, otherStatuses: 0 }]);
    expect(plan.delta).toEqual({
      total: 0,
      passed: 1,
      failed: -1,
      broken: 0,
      skipped: 0,
      passedOnRetry: 1,
      attempts: 1,
    });
  });

  it('only adds an attempt when an earlier one arrives late', () => {
    const stored = new Map<string, StoredOutcome>([
      ['a', { ...attempt('5', 'a', 'PASSED', 1), attempts: 1, otherStatuses: 0 }],
    ]);
    const plan = planAttempts([attempt('9', 'a', 'BROKEN', 0)], stored);
    expect(plan.rows).toEqual([{ outcome: false, attempts: 1, otherStatuses: 0 }]);
    expect(plan.updates).toEqual([{ id: '5', testId: 'a', outcome: true, attempts: 2, otherStatuses: 4 }]);
    expect(plan.delta).toEqual({
      total: 0,
      passed: 0,
      failed: 0,
      broken: 0,
      skipped: 0,
      passedOnRetry: 1,
      attempts: 1,
    });
  });
});
