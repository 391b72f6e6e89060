import net from 'node:net';
import request from 'supertest';
import { ADMIN_EMAIL, ADMIN_PASSWORD } from './app.js';

export interface Session {
  accessToken: string;
  refreshCookie: string;
}

export function refreshCookieFrom(res: request.Response): string {
  const cookies = ([] as string[]).concat(res.headers['set-cookie'] ?? []);
  const cookie = cookies.find((c) => c.startsWith('svc_refresh='));
  if (!cookie) {
    throw new Error(`no svc_refresh cookie in ${JSON.stringify(cookies)}`);
  }
  return cookie.split(';')[0];
}

export async function login(
  url: string,
  username = ADMIN_EMAIL,
  password = ADMIN_PASSWORD,
): Promise<Session> {
  const res = await request(url).post('/api/auth/login').send({ username, password }).expect(200);
  return { accessToken: res.body.accessToken as string, refreshCookie: refreshCookieFrom(res) };
}

/** A project created by `token`'s user (its OWNER): its id. */
export async function createProject(
  url: string,
  token: string,
  project: { key: string; name: string; description?: string },
): Promise<number> {
  const res = await request(url)
    .post('/api/projects')
    .set('Authorization', `Bearer ${token}`)
    .send(project)
    .expect(201);
  return res.body.id as number;
}

/**
 * Polls until `check` returns a value, for effects that happen after the response (audit rows, mail). It returns as
 * soon as the value is there: the limit, generous for a busy CI machine, only lengthens a test that fails. `everyMs`:
 * the pause between checks.
 */
export async function eventually<T>(
  check: () => Promise<T | undefined>,
  timeoutMs = 15_000,
  everyMs = 50,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) {
      return value;
    }
    if (Date.now() > deadline) {
      throw new Error('condition not met in time');
    }
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** Sends a request byte for byte (e.g. with a header twice, which HTTP clients merge or refuse). */
export function rawRequest(url: string, lines: string[]): Promise<{ status: number; body: string }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    let text = '';
    const socket = net.connect(Number(port), hostname, () => socket.write(`${lines.join('\r\n')}\r\n\r\n`));
    socket.on('data', (chunk: Buffer) => (text += chunk.toString()));
    socket.on('error', reject);
    socket.on('end', () => {
      const [head, ...rest] = text.split('\r\n\r\n');
      const body = rest.join('\r\n\r\n');
      const chunked = /transfer-encoding: chunked/i.test(head);
      resolve({
        status: Number(head.split(' ')[1]),
        body: chunked
          ? body
              .split('\r\n')
              .filter((_, i) => i % 2 === 1)
              .join('')
          : body,
      });
    });
  });
}
