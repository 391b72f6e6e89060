import { createHmac, randomBytes } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import type { CheckedTarget } from './address-policy.js';

export const SECRET_PREFIX = 'whsec_';

/** A new signing secret: `whsec_` and 24 random bytes in base64 (Standard Webhooks). */
export function newWebhookSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(24).toString('base64')}`;
}

/**
 * The Standard Webhooks signature: `v1,` and the base64 HMAC-SHA256 of `id.timestamp.body`, keyed with the
 * base64-decoded part of the secret after `whsec_`.
 */
export function signWebhook(secret: string, messageId: string, timestamp: number, body: string): string {
  const key = Buffer.from(
    secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret,
    'base64',
  );
  return `v1,${createHmac('sha256', key).update(`${messageId}.${timestamp}.${body}`).digest('base64')}`;
}

export interface PostOutcome {
  status: number;
}

/**
 * POSTs `body` to the checked target, connecting to the address that was checked (the custom lookup answers it
 * for the URL's host name, so the name is not resolved a second time between the check and the connection, and the
 * Host header and TLS server name stay the URL's). Redirects are not followed: a 3xx is an answer like any other.
 * Rejects when no answer came within `timeoutMs` (connecting, sending and the response's head, together).
 */
export function postPinned(
  target: CheckedTarget,
  headers: Record<string, string>,
  body: string,
  timeoutMs: number,
): Promise<PostOutcome> {
  const pinned: LookupFunction = (_host, options, callback) => {
    if ((options as { all?: boolean }).all) {
      (callback as unknown as (e: null, a: { address: string; family: number }[]) => void)(null, [
        { address: target.address, family: target.family },
      ]);
    } else {
      callback(null, target.address, target.family);
    }
  };
  const client = target.url.protocol === 'https:' ? https : http;
  return new Promise<PostOutcome>((resolve, reject) => {
    const req = client.request(target.url, {
      method: 'POST',
      agent: false,
      lookup: pinned,
      headers: {
        'content-type': 'application/json',
        'user-agent': 'tms-webhooks/1',
        ...headers,
        'content-length': String(Buffer.byteLength(body)),
      },
    });
    const timer = setTimeout(() => {
      req.destroy(new Error(`no answer within ${Math.round(timeoutMs / 100) / 10} s`));
    }, timeoutMs);
    req.on('response', (res) => {
      clearTimeout(timer);
      resolve({ status: res.statusCode ?? 0 });
      // The answer's body is not read: the connection (not kept alive) is closed.
      res.destroy();
    });
    req.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    req.end(body);
  });
}
