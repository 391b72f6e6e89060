import { LimitedLog } from './limited-log.js';

describe(LimitedLog.name, () => {
  let now = 0;
  let lines: string[];
  let log: LimitedLog;
  beforeEach(() => {
    now = 1_000_000;
    lines = [];
    log = new LimitedLog({ warn: (message: unknown) => void lines.push(String(message)) }, () => now);
  });

  it('writes one line per key and minute, and the next line says how many were held back', () => {
    for (let i = 0; i < 50; i++) {
      log.warn('10.0.0.1', 'A live socket from 10.0.0.1 was closed: Max payload size exceeded');
    }
    expect(lines).toEqual(['A live socket from 10.0.0.1 was closed: Max payload size exceeded']);
    now += 60_000;
    log.warn('10.0.0.1', 'again');
    expect(lines[1]).toBe('again (49 more such lines held back since the last one)');
  });

  it('writes at most 20 lines a minute in all, however many keys', () => {
    for (let i = 0; i < 1_000; i++) {
      log.warn(`10.0.${i >> 8}.${i & 255}`, `line ${i}`);
    }
    expect(lines).toHaveLength(20);
    now += 60_000;
    log.warn('10.9.9.9', 'later');
    expect(lines[20]).toBe('later (980 more such lines held back since the last one)');
  });
});
