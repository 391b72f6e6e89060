import { copyTimes } from './test-health.repository.js';

describe('copyTimes', () => {
  it('writes each instant as COPY takes it, and null as \\N, whatever came before', () => {
    const copyTime = copyTimes();
    const a = new Date('2026-11-27T10:00:00.123Z');
    const b = new Date('2026-11-27T10:00:00.124Z');
    expect(copyTime(a)).toBe('2026-11-27T10:00:00.123Z');
    expect(copyTime(new Date(a.getTime()))).toBe('2026-11-27T10:00:00.123Z');
    expect(copyTime(null)).toBe('\\N');
    expect(copyTime(undefined)).toBe('\\N');
    expect(copyTime(a)).toBe('2026-11-27T10:00:00.123Z');
    expect(copyTime(b)).toBe('2026-11-27T10:00:00.124Z');
    expect(copyTime(a)).toBe('2026-11-27T10:00:00.123Z');
  });
});
