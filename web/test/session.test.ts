import { describe, expect, it, vi } from 'vitest';
import { ApiError, type LockManagerLike, Session } from '../src/api/session';

const token = (accessToken: string, expiresIn = 900) => ({
  accessToken,
  tokenType: 'Bearer' as const,
  expiresIn,
});
const json = (status: number, body: unknown) =>
  new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json' } });

/** A fake server: refresh answers from `refreshes`, other calls from `handler`. */
function server(
  refreshes: Response[],
  handler: (path: string, init: RequestInit) => Response = () => json(200, {}),
) {
  const calls: { path: string; authorization?: string }[] = [];
  const fetchImpl = vi.fn(async (input: RequestInfo | URL, init: RequestInit = {}) => {
    const path = String(input);
    calls.push({ path, authorization: (init.headers as Record<string, string> | undefined)?.Authorization });
    if (path === '/api/auth/refresh') {
      return refreshes.shift() ?? json(401, { status: 401, error: 'Unauthorized', message: 'no session' });
    }
    return handler(path, init);
  });
  return { fetchImpl: fetchImpl as unknown as typeof fetch, calls };
}

/** Web Locks as the browser runs them: one holder at a time per name, in request order. */
function locks(): LockManagerLike & { held: string[] } {
  const tails = new Map<string, Promise<unknown>>();
  const held: string[] = [];
  return {
    held,
    request<T>(name: string, callback: () => Promise<T>): Promise<T> {
      const run = (tails.get(name) ?? Promise.resolve()).then(async () => {
        held.push(name);
        try {
          return await callback();
        } finally {
          held.pop();
        }
      });
      tails.set(
        name,
        run.catch(() => undefined),
      );
      return run;
    },
  };
}

describe('Session', () => {
  it('refreshes on load from the cookie, and stays signed out without one', async () => {
    const ok = server([json(200, token('a1'))]);
    const session = new Session({ fetch: ok.fetchImpl, locks: locks() });
    expect(await session.refresh()).toBe(true);
    expect(session.signedIn).toBe(true);
    const none = server([]);
    const anonymous = new Session({ fetch: none.fetchImpl, locks: locks() });
    expect(await anonymous.refresh()).toBe(false);
    expect(anonymous.signedIn).toBe(false);
    expect(anonymous.signedOutReason).toBeUndefined();
  });

  it('sends the access token, and on a 401 refreshes once and retries once', async () => {
    let rejected = 0;
    const api = server([json(200, token('second'))], (_path, init) => {
      const auth = (init.headers as Record<string, string>).Authorization;
      if (auth === 'Bearer first') {
        rejected++;
        return json(401, { status: 401, error: 'Unauthorized', message: 'expired' });
      }
      return json(200, { ok: auth });
    });
    const session = new Session({ fetch: api.fetchImpl, locks: locks() });
    session.accept(token('first'));
    expect(await session.request('GET', '/api/auth/me')).toEqual({ ok: 'Bearer second' });
    expect(rejected).toBe(1);
    expect(api.calls.map((c) => c.path)).toEqual(['/api/auth/me', '/api/auth/refresh', '/api/auth/me']);
  });

  it('ends the session with a message when the refresh is refused (family revoked), and does not retry again', async () => {
    const api = server([], () => json(401, { status: 401, error: 'Unauthorized', message: 'revoked' }));
    const session = new Session({ fetch: api.fetchImpl, locks: locks() });
    session.accept(token('first'));
    await expect(session.request('GET', '/api/auth/me')).rejects.toEqual(new ApiError(401, 'revoked'));
    expect(session.signedIn).toBe(false);
    expect(session.signedOutReason).toBe('revoked');
    expect(api.calls.filter((c) => c.path === '/api/auth/me')).toHaveLength(1);
  });

  it('shares one refresh among concurrent callers, and takes the lock for it', async () => {
    const lockManager = locks();
    let seenLocked = false;
    const api = server([]);
    const fetchImpl = vi.fn(async (input: RequestInfo | URL, init?: RequestInit) => {
      if (String(input) === '/api/auth/refresh') {
        seenLocked = lockManager.held.includes('tms-refresh');
        return json(200, token('fresh'));
      }
      return api.fetchImpl(input, init);
    });
    const session = new Session({ fetch: fetchImpl as unknown as typeof fetch, locks: lockManager });
    const results = await Promise.all([session.refresh(), session.refresh(), session.refresh()]);
    expect(results).toEqual([true, true, true]);
    expect(fetchImpl).toHaveBeenCalledTimes(1);
    expect(seenLocked).toBe(true);
  });

  it('lets two tabs refresh one after the other, never at once', async () => {
    const shared = locks();
    let inFlight = 0;
    let overlapped = false;
    const fetchImpl = vi.fn(async () => {
      inFlight++;
      overlapped ||= inFlight > 1;
      await new Promise((resolve) => setTimeout(resolve, 20));
      inFlight--;
      return json(200, token('t'));
    });
    const tabs = [
      new Session({ fetch: fetchImpl as unknown as typeof fetch, locks: shared }),
      new Session({ fetch: fetchImpl as unknown as typeof fetch, locks: shared }),
    ];
    await Promise.all(tabs.map((t) => t.refresh()));
    expect(fetchImpl).toHaveBeenCalledTimes(2);
    expect(overlapped).toBe(false);
  });

  it('refreshes before the access token expires', async () => {
    vi.useFakeTimers();
    try {
      const api = server([json(200, token('renewed', 900))]);
      const session = new Session({ fetch: api.fetchImpl, locks: locks() });
      session.accept(token('first', 300));
      await vi.advanceTimersByTimeAsync(239_000);
      expect(api.calls).toHaveLength(0);
      await vi.advanceTimersByTimeAsync(2_000);
      expect(api.calls.map((c) => c.path)).toEqual(['/api/auth/refresh']);
      expect(session.expiresInMs).toBeGreaterThan(800_000);
    } finally {
      vi.useRealTimers();
    }
  });

  it('logs out on the server and forgets the token, even when the server does not answer', async () => {
    const api = server([]);
    const session = new Session({ fetch: api.fetchImpl, locks: locks() });
    session.accept(token('t'));
    await session.logout();
    expect(api.calls.map((c) => c.path)).toEqual(['/api/auth/logout']);
    expect(session.signedIn).toBe(false);
    const failing = new Session({
      fetch: (async () => Promise.reject(new TypeError('offline'))) as unknown as typeof fetch,
      locks: locks(),
    });
    failing.accept(token('t'));
    await expect(failing.logout()).rejects.toThrow('offline');
    expect(failing.signedIn).toBe(false);
  });

  it("shows the API's message and the 429's wait", async () => {
    const api = server(
      [],
      () =>
        new Response(
          JSON.stringify({ status: 429, error: 'Too Many Requests', message: 'Too many sign-ins' }),
          {
            status: 429,
            headers: { 'Content-Type': 'application/json', 'Retry-After': '42' },
          },
        ),
    );
    const session = new Session({ fetch: api.fetchImpl, locks: locks() });
    await expect(session.anonymous('POST', '/api/auth/login', {})).rejects.toMatchObject({
      status: 429,
      message: 'Too many sign-ins',
      retryAfterSeconds: 42,
    });
  });

  it('stays signed in when a refresh is not answered (5xx, offline), and tries again', async () => {
    vi.useFakeTimers();
    try {
      const answers = [
        json(503, { status: 503, error: 'Service Unavailable', message: 'restarting' }),
        json(200, token('later', 900)),
      ];
      const api = server([]);
      let offline = true;
      const fetchImpl = vi.fn(async (input: RequestInfo | URL, init?: RequestInit) => {
        if (String(input) !== '/api/auth/refresh') {
          return api.fetchImpl(input, init);
        }
        if (offline) {
          offline = false;
          throw new TypeError('Failed to fetch');
        }
        return answers.shift()!;
      });
      const session = new Session({ fetch: fetchImpl as unknown as typeof fetch, locks: locks() });
      session.accept(token('first', 300));
      expect(await session.refresh()).toBe(true);
      expect(session.signedIn).toBe(true);
      expect(await session.refresh()).toBe(true);
      expect(session.signedIn).toBe(true);
      expect(session.signedOutReason).toBeUndefined();
      await vi.advanceTimersByTimeAsync(15_000);
      expect(fetchImpl).toHaveBeenCalledTimes(3);
      expect(session.expiresInMs).toBeGreaterThan(800_000);
    } finally {
      vi.useRealTimers();
    }
  });
});
