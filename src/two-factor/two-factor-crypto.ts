import { createHmac } from 'node:crypto';
import { AtRestCipher, subkey, UnreadableSecretError } from '../common/at-rest-cipher.js';

export { UnreadableSecretError };

/**
 * Secrets at rest: AES-256-GCM under the configured key, bound to their user (the user id is the additional
 * authenticated data, so a ciphertext copied to another user's row does not decrypt), and keyed hashes of
 * recovery codes (HMAC-SHA-256 under a subkey: a stolen table alone cannot be brute-forced offline).
 */
export class TwoFactorCrypto {
  private readonly cipher: AtRestCipher;
  private readonly hashKey: Buffer;

  constructor(masterKey: Buffer) {
    this.cipher = new AtRestCipher(masterKey, 'tms/two-factor/totp-secret-encryption');
    this.hashKey = subkey(masterKey, 'tms/two-factor/recovery-code-hash');
  }

  encrypt(plain: string, userId: string): string {
    return this.cipher.encrypt(plain, `user:${userId}`);
  }

  /** Throws UnreadableSecretError when the key changed or the value was tampered with. */
  decrypt(stored: string, userId: string): string {
    return this.cipher.decrypt(stored, `user:${userId}`);
  }

  hashRecoveryCode(normalizedCode: string): string {
    return createHmac('sha256', this.hashKey).update(normalizedCode).digest('hex');
  }
}
