import type { Logger } from '@nestjs/common';

/** One line per key (a client address) and minute, and at most this many lines a minute in all. */
const LINES_PER_MINUTE = 20;
const MINUTE_MS = 60_000;

/**
 * Warn-level lines about what clients do wrong (a socket breaking the WebSocket protocol, one refused beyond a
 * cap), which anyone can cause at will: one line per client address and minute, LINES_PER_MINUTE in all, one
 * line each with no stack. The lines held back are counted, and the next line written says how many there were.
 */
export class LimitedLog {
  private windowStart = 0;
  private readonly keys = new Set<string>();
  private suppressed = 0;

  constructor(
    private readonly log: Pick<Logger, 'warn'>,
    private readonly now: () => number = Date.now,
  ) {}

  warn(key: string, message: string): void {
    const now = this.now();
    if (now - this.windowStart >= MINUTE_MS) {
      this.windowStart = now;
      this.keys.clear();
    }
    if (this.keys.has(key) || this.keys.size >= LINES_PER_MINUTE) {
      this.suppressed++;
      return;
    }
    this.keys.add(key);
    const held = this.suppressed;
    this.suppressed = 0;
    this.log.warn(
      held
        ? `${message} (${held} more such line${held === 1 ? '' : 's'} held back since the last one)`
        : message,
    );
  }
}
