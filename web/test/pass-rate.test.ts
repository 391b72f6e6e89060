import { describe, expect, it } from 'vitest';
import { passPercent, passRate } from '../src/ui/CountBar';

const counts = (passed: number, failed: number, broken = 0, skipped = 0) => ({
  total: passed + failed + broken + skipped,
  passed,
  failed,
  broken,
  skipped,
  passedOnRetry: 0,
  attempts: passed + failed + broken + skipped,
});

describe('passRate', () => {
  it('floors to one decimal, so that a run with a failure never shows 100%', () => {
    expect(passRate(counts(299, 1))).toBe('99.6%');
    expect(passRate(counts(9999, 1))).toBe('99.9%');
    expect(passRate(counts(2, 1))).toBe('66.6%');
    expect(passRate(counts(300, 0))).toBe('100%');
    expect(passRate(counts(1, 1))).toBe('50%');
  });

  it('is passed of passed, failed and broken: skipped tests do not count, and none ran is a dash', () => {
    expect(passRate(counts(1, 0, 1, 5))).toBe('50%');
    expect(passRate(counts(0, 0, 0, 3))).toBe('—');
  });
});

describe('passPercent', () => {
  it('is the number the trend chart plots, floored as passRate shows it', () => {
    expect(passPercent(counts(299, 1))).toBe(99.6);
    expect(passPercent(counts(2, 7))).toBe(22.2);
    expect(passPercent(counts(300, 0))).toBe(100);
    expect(passPercent(counts(0, 0, 0, 3))).toBeNull();
  });
});
