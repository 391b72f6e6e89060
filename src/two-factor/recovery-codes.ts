import { randomInt } from 'node:crypto';

export const RECOVERY_CODE_COUNT = 10;
/** Crockford's base32: no I, L, O or U, so codes survive being read aloud or written down. */
const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const GROUP = 5;
const GROUPS = 2;

/** Ten codes of 50 random bits each, shown as XXXXX-XXXXX. */
export function newRecoveryCodes(): string[] {
  return Array.from({ length: RECOVERY_CODE_COUNT }, () =>
    Array.from({ length: GROUPS }, () =>
      Array.from({ length: GROUP }, () => ALPHABET[randomInt(ALPHABET.length)]).join(''),
    ).join('-'),
  );
}

/**
 * The canonical form of what a user typed: case, spaces and hyphens ignored, and the letters Crockford maps
 * (O→0, I/L→1); undefined when it cannot be a recovery code.
 */
export function normalizeRecoveryCode(input: string): string | undefined {
  const code = input.toUpperCase().replace(/[\s-]/g, '').replace(/O/g, '0').replace(/[IL]/g, '1');
  return code.length === GROUP * GROUPS && [...code].every((c) => ALPHABET.includes(c)) ? code : undefined;
}
