import { createHmac } from 'node:crypto';
import { newWebhookSecret, signWebhook } from './webhook-http.js';

describe('Webhook signing (Standard Webhooks)', () => {
  it('matches the specification test vector', () => {
    // Standard Webhooks' published example: this secret, id, timestamp and payload give this signature.
    const sut = signWebhook(
      'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
      'msg_p5jXN8AQM9LWM0D4loKWxJek',
      1614265330,
      '{"test": 2432232314}',
    );
    expect(sut).toBe('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
  });

  it('keys the HMAC with the base64-decoded part after whsec_, over "id.timestamp.body"', () => {
    const secret = newWebhookSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
    expect(key).toHaveLength(24);
    const body = JSON.stringify({ type: 'ping', data: { ü: '✓' } });
    const expected = createHmac('sha256', key).update(`msg_1.1700000000.${body}`).digest('base64');
    expect(signWebhook(secret, 'msg_1', 1700000000, body)).toBe(`v1,${expected}`);
    expect(signWebhook(secret, 'msg_1', 1700000001, body)).not.toBe(`v1,${expected}`);
  });
});
