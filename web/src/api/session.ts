/**
 * The browser session, on the spec's Bearer JWT path: the access token lives in this object only (never in
 * localStorage, sessionStorage or a readable cookie). The refresh token is the HttpOnly `svc_refresh` cookie,
 * which only POST /api/auth/refresh reads. Refreshes happen on load, shortly before the access token expires,
 * and once after a 401; tabs take turns through the Web Locks API, so two tabs never present the same refresh
 * token at once (the server would see a reuse and revoke the family).
 */

export interface AccessToken {
  accessToken: string;
  tokenType: 'Bearer';
  expiresIn: number;
}

export interface ApiErrorBody {
  status: number;
  error: string;
  message: string;
}

/** An answer of the API that is not a success: its `{status, error, message}`. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/** Why the session ended without the user asking: shown on the sign-in page. */
export type SignedOutReason = 'expired' | 'revoked' | undefined;

type Listener = () => void;

/** The part of the Web Locks API the session uses (navigator.locks), replaceable in tests. */
export interface LockManagerLike {
  request<T>(name: string, callback: () => Promise<T>): Promise<T>;
}

const REFRESH_LOCK = 'tms-refresh';
/** Refresh this long before the access token expires. */
const EARLY_MS = 60_000;
/** After a refresh the service could not answer (not a 401), try again this soon. */
const RETRY_MS = 15_000;

export interface SessionOptions {
  fetch?: typeof fetch;
  locks?: LockManagerLike;
  now?: () => number;
}

export class Session {
  private token: string | undefined;
  private expiresAt = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private refreshing: Promise<boolean> | undefined;
  private readonly listeners = new Set<Listener>();
  private readonly fetchImpl: typeof fetch;
  private readonly locks: LockManagerLike | undefined;
  private readonly now: () => number;
  /** Set when the session ended by itself (the family revoked, the account disabled). */
  signedOutReason: SignedOutReason;

  constructor(options: SessionOptions = {}) {
    this.fetchImpl = options.fetch ?? ((input, init) => fetch(input, init));
    this.locks = options.locks ?? (typeof navigator !== 'undefined' ? navigator.locks : undefined);
    this.now = options.now ?? Date.now;
  }

  get signedIn(): boolean {
    return this.token !== undefined;
  }

  /** The access token, for the live-update socket's `auth` message (never stored anywhere else). */
  get accessToken(): string | undefined {
    return this.token;
  }

  /** Called on every change of signed-in state. */
  subscribe(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Takes a token from a sign-in (login or the two-factor step). */
  accept(token: AccessToken): void {
    this.token = token.accessToken;
    this.expiresAt = this.now() + token.expiresIn * 1000;
    this.signedOutReason = undefined;
    this.schedule(token.expiresIn * 1000);
    this.emit();
  }

  /**
   * Exchanges the refresh cookie for a new access token, one tab at a time; false (signed out) when the
   * server refuses. Concurrent callers in this tab share one request.
   */
  refresh(): Promise<boolean> {
    this.refreshing ??= this.refreshOnce().finally(() => (this.refreshing = undefined));
    return this.refreshing;
  }

  /** Signs out here and on the server (the refresh family revoked). */
  async logout(): Promise<void> {
    try {
      await this.fetchImpl('/api/auth/logout', { method: 'POST', credentials: 'same-origin' });
    } finally {
      this.clear(undefined);
    }
  }

  /**
   * A request to the API with the access token; a 401 refreshes once and retries. Resolves with the parsed
   * body (undefined for 204), or throws ApiError with the server's message.
   */
  request<T>(method: string, path: string, body?: unknown): Promise<T> {
    return this.authorized(async (token) => parse<T>(await this.send(method, path, body, token)));
  }

  /**
   * Runs `call` with the access token; when it fails with a 401 while signed in, refreshes once and runs it
   * again (any request to the API: fetch here, or an upload with progress).
   */
  async authorized<T>(call: (token: string | undefined) => Promise<T>): Promise<T> {
    try {
      return await call(this.token);
    } catch (error) {
      if (
        error instanceof ApiError &&
        error.status === 401 &&
        this.token !== undefined &&
        (await this.refresh())
      ) {
        return call(this.token);
      }
      throw error;
    }
  }

  /** A request without the access token (sign-in, registration, password reset). */
  async anonymous<T>(method: string, path: string, body?: unknown): Promise<T> {
    return parse<T>(await this.fetchImpl(path, init(method, body)));
  }

  private send(method: string, path: string, body: unknown, token: string | undefined): Promise<Response> {
    const request = init(method, body);
    if (token) {
      (request.headers as Record<string, string>).Authorization = `Bearer ${token}`;
    }
    return this.fetchImpl(path, request);
  }

  private async refreshOnce(): Promise<boolean> {
    const run = async () => {
      let res: Response;
      try {
        res = await this.fetchImpl('/api/auth/refresh', { method: 'POST', credentials: 'same-origin' });
      } catch {
        // Offline, or the service restarting: the session is not over. Keep the token, try again soon.
        return this.retryLater();
      }
      if (res.ok) {
        this.accept((await res.json()) as AccessToken);
        return true;
      }
      if (res.status !== 401) {
        // 5xx, 429: the cookie may well be valid still.
        return this.retryLater();
      }
      // 401: no cookie (never signed in), expired, or the family revoked.
      const hadSession = this.token !== undefined;
      this.clear(hadSession ? 'revoked' : undefined);
      return false;
    };
    return this.locks ? this.locks.request(REFRESH_LOCK, run) : run();
  }

  private schedule(lifetimeMs: number): void {
    clearTimeout(this.timer);
    // Timers fire at once past 2^31 - 1 ms: a very long token lifetime is re-armed instead.
    const delay = Math.min(2 ** 31 - 1, Math.max(1_000, lifetimeMs - Math.min(EARLY_MS, lifetimeMs / 4)));
    this.timer = setTimeout(() => void this.refresh(), delay);
  }

  /** A refresh that could not be answered: signed in still while the token lasts, and another try soon. */
  private retryLater(): boolean {
    if (this.token === undefined) {
      return false;
    }
    clearTimeout(this.timer);
    this.timer = setTimeout(
      () => void this.refresh(),
      Math.min(RETRY_MS, Math.max(1_000, this.expiresInMs / 2)),
    );
    return this.expiresInMs > 0;
  }

  private clear(reason: SignedOutReason): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.token = undefined;
    this.expiresAt = 0;
    this.signedOutReason = reason;
    this.emit();
  }

  private emit(): void {
    this.listeners.forEach((listener) => listener());
  }

  /** Milliseconds until the access token expires (0 when signed out). */
  get expiresInMs(): number {
    return Math.max(0, this.expiresAt - this.now());
  }
}

function init(method: string, body: unknown): RequestInit {
  const headers: Record<string, string> = { Accept: 'application/json' };
  if (body !== undefined) {
    headers['Content-Type'] = 'application/json';
  }
  return {
    method,
    headers,
    credentials: 'same-origin',
    body: body === undefined ? undefined : JSON.stringify(body),
  };
}

async function parse<T>(res: Response): Promise<T> {
  if (res.status === 204) {
    return undefined as T;
  }
  const text = await res.text();
  let body: unknown;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    // Not the API's JSON (a proxy's error page): the status says what happened.
    body = undefined;
  }
  if (!res.ok) {
    const error = body as Partial<ApiErrorBody> | undefined;
    const retryAfter = Number(res.headers.get('Retry-After'));
    throw new ApiError(
      res.status,
      error?.message ?? `${res.status} ${res.statusText}`,
      Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter : undefined,
    );
  }
  return body as T;
}
