import { randomBytes } from 'node:crypto';
import { TwoFactorCrypto, UnreadableSecretError } from './two-factor-crypto.js';

describe(TwoFactorCrypto.name, () => {
  const key = randomBytes(32);
  const crypto = new TwoFactorCrypto(key);
  const secret = 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP';

  it('round-trips a secret, with a fresh nonce each time and no plaintext in the stored form', () => {
    const a = crypto.encrypt(secret, '7');
    const b = crypto.encrypt(secret, '7');
    expect(a).not.toBe(b);
    expect(a).toMatch(/^v1:[A-Za-z0-9+/]+=*$/);
    expect(a).not.toContain(secret);
    expect(Buffer.from(a.slice(3), 'base64').toString('latin1')).not.toContain(secret);
    expect(crypto.decrypt(a, '7')).toBe(secret);
    expect(crypto.decrypt(b, '7')).toBe(secret);
  });

  it("refuses another user's ciphertext, another key and any tampering", () => {
    const stored = crypto.encrypt(secret, '7');
    expect(() => crypto.decrypt(stored, '8')).toThrow(UnreadableSecretError);
    expect(() => new TwoFactorCrypto(randomBytes(32)).decrypt(stored, '7')).toThrow(UnreadableSecretError);
    const raw = Buffer.from(stored.slice(3), 'base64');
    raw[raw.length - 1] ^= 1;
    expect(() => crypto.decrypt(`v1:${raw.toString('base64')}`, '7')).toThrow(UnreadableSecretError);
    expect(() => crypto.decrypt('v2:AAAA', '7')).toThrow(UnreadableSecretError);
  });

  it('hashes recovery codes under the key: stable for one key, different under another', () => {
    const hash = crypto.hashRecoveryCode('ABCDE12345');
    expect(hash).toMatch(/^[0-9a-f]{64}$/);
    expect(crypto.hashRecoveryCode('ABCDE12345')).toBe(hash);
    expect(crypto.hashRecoveryCode('ABCDE12346')).not.toBe(hash);
    expect(new TwoFactorCrypto(randomBytes(32)).hashRecoveryCode('ABCDE12345')).not.toBe(hash);
  });
});
