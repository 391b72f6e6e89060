import { hash } from 'node:crypto';
import { NO_COMMIT } from './flakiness.js';

/**
 * A 64-bit key of a text (a run's stream, its commit) for a test's window: the first 8 bytes of its MD5, signed, in
 * decimal (a bigint column). The migration that filled test_health computes the same in SQL:
 * ('x' || substr(md5(text), 1, 16))::bit(64)::bigint.
 */
export function textKey(text: string): string {
  return BigInt.asIntN(64, BigInt(`0x${hash('md5', text, 'hex').slice(0, 16)}`)).toString();
}

/** The key of a run's `commit` attribute; NO_COMMIT when it has none (such runs never match each other). */
export function commitKey(commit: string | null | undefined): string {
  return commit ? textKey(commit) : NO_COMMIT;
}
