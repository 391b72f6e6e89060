import { Transform } from 'node:stream';
import { formatBytes, note, setBarDrawn } from './output.js';

/** Below this, an upload is over before a bar would be worth drawing. */
const LARGE = 1024 * 1024;
const BAR_WIDTH = 24;
const LABEL_WIDTH = 24;

/**
 * Shows how much of an upload has gone: on a terminal a bar redrawn in place (at most 10 times a second), elsewhere
 * (a CI log) a plain line at each quarter of a large upload. Both on standard error, so standard output stays the
 * summary alone.
 */
export class Progress {
  /**
   * @param {string} label e.g. "reports.zip"
   * @param {number} total bytes
   * @param {{isTTY?: boolean, columns?: number}} [stream] where it draws (process.stderr)
   */
  constructor(label, total, stream = process.stderr) {
    this.label = label;
    this.total = total;
    this.tty = Boolean(stream.isTTY) && !process.env.CI;
    this.columns = stream.columns || 80;
    this.sent = 0;
    this.drawnAt = 0;
    this.quarter = 0;
  }

  /** A pass-through stream that counts what is read from it (by the HTTP client, as it sends). */
  counter() {
    this.sent = 0;
    this.quarter = 0;
    return new Transform({
      transform: (chunk, _encoding, done) => {
        this.advance(chunk.length);
        done(null, chunk);
      },
    });
  }

  /** @param {number} bytes */
  advance(bytes) {
    this.sent += bytes;
    if (this.total < LARGE) {
      return;
    }
    if (this.tty) {
      const now = Date.now();
      if (now - this.drawnAt >= 100 || this.sent >= this.total) {
        this.drawnAt = now;
        this.draw();
      }
      return;
    }
    const quarter = Math.floor((4 * this.sent) / this.total);
    if (quarter > this.quarter && quarter < 4) {
      this.quarter = quarter;
      note(`  ${quarter * 25}% (${formatBytes(this.sent)} of ${formatBytes(this.total)})`);
    }
  }

  draw() {
    const share = this.total ? Math.min(1, this.sent / this.total) : 1;
    const filled = Math.round(share * BAR_WIDTH);
    const bar = `${'█'.repeat(filled)}${'░'.repeat(BAR_WIDTH - filled)}`;
    const figures = `${String(Math.floor(share * 100)).padStart(3)}% ${formatBytes(this.sent)}/${formatBytes(this.total)}`;
    const chars = [...this.label];
    const label = chars.length > LABEL_WIDTH ? `…${chars.slice(-(LABEL_WIDTH - 1)).join('')}` : this.label;
    const line = `${label} ${bar} ${figures}`;
    // On a narrow terminal the bar alone, so that the line never wraps (a wrapped line is not redrawn in place).
    process.stderr.write(`\r${[...line].length < this.columns ? line : `${bar} ${figures}`}\x1b[K`);
    setBarDrawn(true);
  }

  /** The upload is sent: ends the bar's line. */
  done() {
    if (this.tty && this.total >= LARGE) {
      this.draw();
      setBarDrawn(false);
      process.stderr.write('\n');
    }
  }
}
