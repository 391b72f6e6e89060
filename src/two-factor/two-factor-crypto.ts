import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from 'node:crypto';

const VERSION = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;

export class UnreadableSecretError extends Error {
  override name = 'UnreadableSecretError';
}

/**
 * Secrets at rest: AES-256-GCM under the configured key, bound to their user (the user id is the additional
 * authenticated data, so a ciphertext copied to another user's row does not decrypt), and keyed hashes of
 * recovery codes (HMAC-SHA-256 under a subkey: a stolen table alone cannot be brute-forced offline).
 */
export class TwoFactorCrypto {
  private readonly encryptionKey: Buffer;
  private readonly hashKey: Buffer;

  constructor(masterKey: Buffer) {
    this.encryptionKey = subkey(masterKey, 'totp-secret-encryption');
    this.hashKey = subkey(masterKey, 'recovery-code-hash');
  }

  encrypt(plain: string, userId: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.encryptionKey, iv);
    cipher.setAAD(Buffer.from(`user:${userId}`));
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return `${VERSION}:${Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64')}`;
  }

  /** Throws UnreadableSecretError when the key changed or the value was tampered with. */
  decrypt(stored: string, userId: string): string {
    const [version, payload] = stored.split(':');
    const raw = Buffer.from(payload ?? '', 'base64');
    if (version !== VERSION || raw.length <= IV_BYTES + TAG_BYTES) {
      throw new UnreadableSecretError('Unknown secret format');
    }
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.encryptionKey, raw.subarray(0, IV_BYTES));
      decipher.setAAD(Buffer.from(`user:${userId}`));
      decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
      return Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString(
        'utf8',
      );
    } catch {
      throw new UnreadableSecretError('The secret does not decrypt under the configured key');
    }
  }

  hashRecoveryCode(normalizedCode: string): string {
    return createHmac('sha256', this.hashKey).update(normalizedCode).digest('hex');
  }
}

function subkey(masterKey: Buffer, purpose: string): Buffer {
  return Buffer.from(hkdfSync('sha256', masterKey, '', `tms/two-factor/${purpose}`, 32));
}
