import { AtRestCipher } from '../common/at-rest-cipher.js';

/** Webhook signing secrets at rest: encrypted as TOTP secrets are, each bound to its webhook's id. */
export class WebhookSecrets {
  private readonly cipher: AtRestCipher;

  constructor(masterKey: Buffer) {
    this.cipher = new AtRestCipher(masterKey, 'tms/webhooks/secret-encryption');
  }

  encrypt(secret: string, webhookId: string): string {
    return this.cipher.encrypt(secret, `webhook:${webhookId}`);
  }

  decrypt(stored: string, webhookId: string): string {
    return this.cipher.decrypt(stored, `webhook:${webhookId}`);
  }
}
