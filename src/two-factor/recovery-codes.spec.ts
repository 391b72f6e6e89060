import { newRecoveryCodes, normalizeRecoveryCode, RECOVERY_CODE_COUNT } from './recovery-codes.js';

describe('recovery codes', () => {
  it('makes ten distinct codes of two groups of five unambiguous characters', () => {
    const codes = newRecoveryCodes();
    expect(codes).toHaveLength(RECOVERY_CODE_COUNT);
    expect(new Set(codes).size).toBe(RECOVERY_CODE_COUNT);
    for (const code of codes) {
      expect(code).toMatch(/^[0-9A-HJKMNP-TV-Z]{5}-[0-9A-HJKMNP-TV-Z]{5}$/);
    }
  });

  it('accepts what a person types: any case, spaces or no hyphen, O for 0 and I or L for 1', () => {
    expect(normalizeRecoveryCode('7k2qd-m9xta')).toBe('7K2QDM9XTA');
    expect(normalizeRecoveryCode(' 7K2QD M9XTA ')).toBe('7K2QDM9XTA');
    expect(normalizeRecoveryCode('O1LIQ-00000')).toBe('0111Q00000');
  });

  it('refuses what cannot be a recovery code', () => {
    for (const input of ['', '123456', '7K2QD-M9XT', '7K2QD-M9XTAB', '7K2QD-M9XU!', 'UUUUU-UUUUU']) {
      expect(normalizeRecoveryCode(input)).toBeUndefined();
    }
  });
});
