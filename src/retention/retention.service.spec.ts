import { pauseAfter } from './retention.service.js';

describe('the pause after a purge batch', () => {
  it('is the least pause for a quick batch, and the share of the batch time for a slow one', () => {
    const config = { pauseMs: 10, pausePercent: 10 };
    expect(pauseAfter(40, config)).toBe(10);
    expect(pauseAfter(100, config)).toBe(10);
    expect(pauseAfter(800, config)).toBe(80);
    expect(pauseAfter(800, { pauseMs: 10, pausePercent: 50 })).toBe(400);
  });

  it('is none when both are 0, and the least pause alone when the share is 0', () => {
    expect(pauseAfter(500, { pauseMs: 0, pausePercent: 0 })).toBe(0);
    expect(pauseAfter(500, { pauseMs: 200, pausePercent: 0 })).toBe(200);
  });
});
