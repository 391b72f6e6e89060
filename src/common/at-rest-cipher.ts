import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

const VERSION = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;

export class UnreadableSecretError extends Error {
  override name = 'UnreadableSecretError';
}

/**
 * A secret at rest (a TOTP secret, a webhook's signing secret): AES-256-GCM under a subkey of the configured key
 * for one purpose, bound to the row it belongs to (`owner` is the additional authenticated data, so a ciphertext
 * copied to another row does not decrypt). Stored as `v1:<base64 of iv, tag, ciphertext>`.
 */
export class AtRestCipher {
  private readonly key: Buffer;

  constructor(masterKey: Buffer, purpose: string) {
    this.key = subkey(masterKey, purpose);
  }

  encrypt(plain: string, owner: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(Buffer.from(owner));
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return `${VERSION}:${Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64')}`;
  }

  /** Throws UnreadableSecretError when the key changed or the value was tampered with. */
  decrypt(stored: string, owner: string): string {
    const [version, payload] = stored.split(':');
    const raw = Buffer.from(payload ?? '', 'base64');
    if (version !== VERSION || raw.length <= IV_BYTES + TAG_BYTES) {
      throw new UnreadableSecretError('Unknown secret format');
    }
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.key, raw.subarray(0, IV_BYTES));
      decipher.setAAD(Buffer.from(owner));
      decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
      return Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString(
        'utf8',
      );
    } catch {
      throw new UnreadableSecretError('The secret does not decrypt under the configured key');
    }
  }
}

/** A 32-byte key for one purpose, derived from the master key (HKDF-SHA256). */
export function subkey(masterKey: Buffer, purpose: string): Buffer {
  return Buffer.from(hkdfSync('sha256', masterKey, '', purpose, 32));
}
