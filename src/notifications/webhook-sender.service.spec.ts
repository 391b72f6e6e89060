import { jest } from '@jest/globals';
import { Logger } from '@nestjs/common';
import type { EventEmitter2 } from '@nestjs/event-emitter';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { AppConfig } from '../config/app-config.js';
import type { Metrics } from '../health/metrics.js';
import type { MailService } from '../mail/mail.service.js';
import type { SubscriptionsRepository } from './subscriptions.repository.js';
import type { WebhookSecrets } from './webhook-secrets.js';
import { WebhookSenderService } from './webhook-sender.service.js';
import type { ClaimedDelivery, WebhooksRepository } from './webhooks.repository.js';

/**
 * The sender's claim (webhook-sender.service.ts): an attempt is begun only while its answer can still come inside
 * the claim's lease, and an outcome another claim took over is not counted. The outbox itself is faked here (its
 * conditional record is tested on PostgreSQL: test/integration/notifications); the receiver is a real local server.
 */
describe('WebhookSenderService, its claim', () => {
  let server: http.Server;
  let url: string;
  const received: string[] = [];

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      received.push(req.url ?? '');
      req.resume();
      req.on('end', () => res.writeHead(204).end());
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((done) => server.close(() => done()));
  });
  beforeEach(() => {
    received.length = 0;
    jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
  });
  afterEach(() => jest.restoreAllMocks());

  function sender(recordsHeld: boolean) {
    const webhooks = {
      markDelivered: jest.fn(() => Promise.resolve(recordsHeld)),
      markAttemptFailed: jest.fn(() => Promise.resolve(undefined)),
    };
    const inc = jest.fn();
    const config = { webhooks: { timeoutMs: 2_000, retryBaseSeconds: 10, allowPrivate: true } };
    const service = new WebhookSenderService(
      webhooks as unknown as WebhooksRepository,
      {} as SubscriptionsRepository,
      {} as WebhookSecrets,
      {} as MailService,
      config as unknown as AppConfig,
      { webhookDeliveries: { inc } } as unknown as Metrics,
      {} as EventEmitter2,
    );
    const deliver = (d: ClaimedDelivery & { answerBy: number }) =>
      (service as unknown as { deliver(d: ClaimedDelivery & { answerBy: number }): Promise<void> }).deliver(
        d,
      );
    return { webhooks, inc, deliver };
  }

  const claim = (path: string, answerBy: number): ClaimedDelivery & { answerBy: number } => ({
    id: '1',
    webhookId: '2',
    projectId: '3',
    event: 'ping',
    messageId: 'msg_1',
    payload: { timestamp: '2026-11-27T00:00:00.000Z', projectId: '3', data: {} },
    attempts: 0,
    url: `${url}${path}`,
    // Unsigned: no secret to decrypt.
    format: 'slack',
    secretEncrypted: '',
    lease: '2026-11-27 00:00:30.123456+00',
    answerBy,
  });

  it('sends and records an attempt whose answer can come inside its lease', async () => {
    const { webhooks, inc, deliver } = sender(true);
    await deliver(claim('/in-time', performance.now() + 60_000));
    expect(received).toEqual(['/in-time']);
    expect(webhooks.markDelivered).toHaveBeenCalledWith(expect.objectContaining({ id: '1' }), 204);
    expect(inc).toHaveBeenCalledWith({ result: 'delivered' });
  });

  it('does not begin an attempt whose answer could come after its lease: nothing sent, nothing recorded', async () => {
    const { webhooks, inc, deliver } = sender(true);
    // The timeout is 2 s; the lease leaves 1 s.
    await deliver(claim('/too-late', performance.now() + 1_000));
    expect(received).toEqual([]);
    expect(webhooks.markDelivered).not.toHaveBeenCalled();
    expect(webhooks.markAttemptFailed).not.toHaveBeenCalled();
    expect(inc).not.toHaveBeenCalled();
  });

  it('counts nothing for an attempt whose claim another one took over meanwhile', async () => {
    const { webhooks, inc, deliver } = sender(false);
    await deliver(claim('/taken-over', performance.now() + 60_000));
    expect(received).toEqual(['/taken-over']);
    expect(webhooks.markDelivered).toHaveBeenCalled();
    expect(inc).not.toHaveBeenCalled();
  });
});
