import type { IncomingMessage } from 'node:http';
import express from 'express';
import { upgradeClientIp } from './decorators.js';

/** A WebSocket upgrade request from `peer`, forwarded for `forwardedFor` if given. */
function upgrade(peer: string, forwardedFor?: string): IncomingMessage {
  return {
    headers: forwardedFor ? { 'x-forwarded-for': forwardedFor } : {},
    socket: { remoteAddress: peer },
  } as unknown as IncomingMessage;
}

describe(upgradeClientIp.name, () => {
  it('honours X-Forwarded-For only from a trusted proxy (SVC_TRUSTED_PROXIES, as Express’s `trust proxy`)', () => {
    const app = express();
    app.set('trust proxy', ['10.0.0.10']);
    expect(upgradeClientIp(upgrade('10.0.0.10', '203.0.113.7'), app)).toBe('203.0.113.7');
    expect(upgradeClientIp(upgrade('198.51.100.1', '203.0.113.7'), app)).toBe('198.51.100.1');
    expect(upgradeClientIp(upgrade('::ffff:198.51.100.1'), app)).toBe('198.51.100.1');
  });

  it('ignores X-Forwarded-For when no proxy is trusted', () => {
    const app = express();
    app.set('trust proxy', false);
    expect(upgradeClientIp(upgrade('10.0.0.10', '203.0.113.7'), app)).toBe('10.0.0.10');
  });
});
