import { hash } from 'node:crypto';
import { NO_COMMIT } from './flakiness.js';

/**
 * A 32-bit key of a text (a run's stream, its commit) for a test's window: the first 4 bytes of its MD5, unsigned,
 * in decimal. 32 bits are enough: two texts are only ever compared within one test's window (a few dozen runs), so
 * a collision would have to fall there to matter. The migration that filled test_health takes the same bytes in
 * SQL: decode(substr(md5(text), 1, 8), 'hex').
 */
export function textKey(text: string): string {
  return String(Number.parseInt(hash('md5', text, 'hex').slice(0, 8), 16));
}

/**
 * The key of a run's `commit` attribute; NO_COMMIT when it has none (such runs never match each other). A commit
 * whose key happens to be NO_COMMIT's takes 1 instead, so that it still matches its own runs.
 */
export function commitKey(commit: string | null | undefined): string {
  if (!commit) {
    return NO_COMMIT;
  }
  const key = textKey(commit);
  return key === NO_COMMIT ? '1' : key;
}
