import { setTimeout as sleep } from 'node:timers/promises';
import { ApiError, unreachableError, usageError } from './errors.js';
import { addSecret, note } from './output.js';

/** How long retries may take in all, by default (API.md: "with backoff, bounded"). */
export const DEFAULT_RETRY_SECONDS = 60;
/** A read that has not answered in this long is abandoned and retried. */
const READ_TIMEOUT_MS = 60_000;
/** Statuses that mean "the service is there but not ready now"; a 4xx is never retried. */
const RETRY_STATUSES = new Set([502, 503, 504]);
/** Network failures that are the certificate's fault: retrying cannot help. */
const FATAL_CODES = new Set([
  'CERT_HAS_EXPIRED',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'ERR_SSL_WRONG_VERSION_NUMBER',
]);
/** The upload's file went away or cannot be read. */
const FILE_CODES = new Set(['ENOENT', 'EACCES', 'EISDIR']);

/**
 * @typedef {object} Config
 * @property {URL} base the service's address, ending in "/" (any path prefix kept), without credentials
 * @property {string} token
 * @property {number} retrySeconds
 */

/**
 * The service's address and token from the options, else TMS_URL and TMS_TOKEN; each checked, neither ever printed
 * back (only the address, without any password in it).
 * @param {{url?: string, token?: string}} options
 * @param {NodeJS.ProcessEnv} env
 * @returns {Config}
 */
export function loadConfig(options, env) {
  const token = options.token ?? env.TMS_TOKEN;
  addSecret(token);
  const rawUrl = options.url ?? env.TMS_URL;
  if (!rawUrl) {
    throw usageError('No service address: set TMS_URL or pass --url (e.g. https://tms.example.com)');
  }
  let base;
  try {
    base = new URL(rawUrl);
  } catch {
    throw usageError('TMS_URL (or --url) is not a URL: it must look like https://tms.example.com');
  }
  if (base.protocol !== 'http:' && base.protocol !== 'https:') {
    throw usageError(`TMS_URL (or --url) must be an http:// or https:// address, not ${base.protocol}`);
  }
  addSecret(base.password ? decodeURIComponent(base.password) : undefined);
  addSecret(base.password);
  if (!token) {
    throw usageError('No API token: set TMS_TOKEN or pass --token (create one under Profile › API keys)');
  }
  if (!/^[\x21-\x7e]+$/.test(token)) {
    throw usageError('The API token (TMS_TOKEN or --token) holds spaces or characters a token never has');
  }
  base.username = '';
  base.password = '';
  base.search = '';
  base.hash = '';
  if (!base.pathname.endsWith('/')) {
    base.pathname += '/';
  }
  const retry = env.TMS_RETRY_SECONDS;
  const retrySeconds = retry === undefined || retry === '' ? DEFAULT_RETRY_SECONDS : Number(retry);
  if (!Number.isFinite(retrySeconds) || retrySeconds < 0) {
    throw usageError(`TMS_RETRY_SECONDS must be a number of seconds, not ${JSON.stringify(retry)}`);
  }
  return { base, token, retrySeconds };
}

/**
 * @typedef {object} RequestOptions
 * @property {Record<string, string | number | undefined>} [query]
 * @property {Record<string, string>} [headers]
 * @property {() => {body: any, length?: number}} [body] makes the body afresh for each attempt (a stream is read once)
 * @property {boolean} [noTimeout] an upload may take long: no read timeout
 */

/** The service's public API, with the token, bounded retries and errors a person can act on. */
export class Client {
  /** @param {Config} config */
  constructor(config) {
    this.config = config;
  }

  /** The address of a page of the web UI, e.g. `runs/42`. @param {string} path */
  webUrl(path) {
    return new URL(path, this.config.base).toString();
  }

  /**
   * @param {string} path e.g. "api/runs/42", relative to the service's address
   * @param {Record<string, string | number | undefined>} [query]
   */
  apiUrl(path, query = {}) {
    const url = new URL(path, this.config.base);
    for (const [key, value] of Object.entries(query)) {
      if (value !== undefined) {
        url.searchParams.set(key, String(value));
      }
    }
    return url;
  }

  /**
   * Sends a request, retrying a 502/503/504 or a dropped or refused connection with exponential backoff until
   * TMS_RETRY_SECONDS (60 s by default) have passed; any other answer, a 4xx above all, is returned at once.
   * @param {string} method
   * @param {string} path
   * @param {RequestOptions} [options]
   * @returns {Promise<Response>}
   */
  async send(method, path, options = {}) {
    const url = this.apiUrl(path, options.query);
    const deadline = Date.now() + this.config.retrySeconds * 1000;
    const what = `${method} ${url.pathname}`;
    let delay = 500;
    for (let attempt = 1; ; attempt++) {
      /** @type {string} */
      let problem;
      /** @type {number | undefined} */
      let retryAfter;
      try {
        const made = options.body?.();
        const headers = {
          authorization: `Bearer ${this.config.token}`,
          accept: 'application/json',
          'user-agent': 'tms-cli',
          ...options.headers,
          ...(made?.length !== undefined ? { 'content-length': String(made.length) } : {}),
        };
        const res = await fetch(url, {
          method,
          headers,
          body: made?.body,
          ...(made ? { duplex: 'half' } : {}),
          redirect: 'error',
          signal: options.noTimeout ? undefined : AbortSignal.timeout(READ_TIMEOUT_MS),
        });
        if (!RETRY_STATUSES.has(res.status)) {
          return res;
        }
        const body = await errorMessage(res);
        problem = `${res.status} ${body}`;
        const header = Number(res.headers.get('retry-after'));
        retryAfter = Number.isFinite(header) && header > 0 ? header * 1000 : undefined;
      } catch (error) {
        const code = networkCode(error);
        const reason = networkReason(error);
        if (code === 'ERR_INVALID_URL' || (code && FATAL_CODES.has(code))) {
          throw unreachableError(`Cannot reach the service at ${this.config.base.origin}: ${reason}`);
        }
        if (code && FILE_CODES.has(code)) {
          throw usageError(`Cannot read what ${what} sends: ${reason}`);
        }
        if (/redirect/i.test(reason)) {
          throw usageError(
            `The service at ${this.config.base.origin} answered ${what} with a redirect: set TMS_URL to where it leads`,
          );
        }
        if (
          !code &&
          !(error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError'))
        ) {
          // Refused before anything was sent (a port fetch blocks, a bad header): retrying cannot help.
          throw usageError(`Cannot send ${what} to ${this.config.base.origin}: ${reason}`);
        }
        problem = reason;
      }
      const left = deadline - Date.now();
      if (left <= 0) {
        throw unreachableError(
          `The service at ${this.config.base.origin} is unreachable (${what}: ${problem}), ` +
            `after ${attempt} attempt${attempt === 1 ? '' : 's'} in ${this.config.retrySeconds} s`,
        );
      }
      const wait = Math.min(retryAfter ?? delay, left);
      note(`${what}: ${problem}; retrying in ${(wait / 1000).toFixed(1)} s`);
      await sleep(wait);
      delay = Math.min(delay * 2, 16_000);
    }
  }

  /**
   * The JSON of a successful answer; an error answer becomes an ApiError (exit 2 for a 4xx, 3 for a 5xx).
   * @param {string} method
   * @param {string} path
   * @param {RequestOptions} [options]
   * @returns {Promise<any>}
   */
  async json(method, path, options) {
    const res = await this.send(method, path, options);
    if (!res.ok) {
      throw new ApiError(res.status, await errorMessage(res), `${method} /${path}`);
    }
    return res.status === 204 ? undefined : res.json();
  }

  /**
   * A GET whose 404 (or 400 for a query parameter an older service does not know) means "not there", answered as
   * undefined rather than an error.
   * @param {string} path
   * @param {Record<string, string | number | undefined>} [query]
   * @param {number[]} [absent] the statuses that mean "not available"
   */
  async optional(path, query, absent = [404]) {
    try {
      return await this.json('GET', path, { query });
    } catch (error) {
      if (error instanceof ApiError && absent.includes(error.status)) {
        return undefined;
      }
      throw error;
    }
  }

  /**
   * Every item of a paged list, page by page (size 500), up to `limit` items.
   * @param {string} path
   * @param {Record<string, string | number | undefined>} [query]
   * @param {number} [limit]
   * @returns {Promise<{items: any[], total: number}>}
   */
  async all(path, query = {}, limit = 10_000) {
    /** @type {any[]} */
    const items = [];
    let total = 0;
    for (let page = 0; items.length < limit; page++) {
      const body = await this.json('GET', path, { query: { ...query, page, size: 500 } });
      items.push(...body.content);
      total = body.totalElements;
      if (body.content.length === 0 || page + 1 >= body.totalPages) {
        break;
      }
    }
    return { items: items.slice(0, limit), total };
  }
}

/**
 * The message of an error answer: the service's `message` ({status, error, message}), else the start of the body.
 * @param {Response} res
 */
export async function errorMessage(res) {
  const text = await res.text().catch(() => '');
  try {
    const body = JSON.parse(text);
    if (body && typeof body.message === 'string') {
      return body.message;
    }
  } catch {
    // not JSON: a proxy's page
  }
  const plain = text
    .replace(/<[^>]*>/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  return plain ? plain.slice(0, 200) : res.statusText || 'no message';
}

/** @param {unknown} error the code of the deepest cause that has one (ECONNREFUSED, UND_ERR_SOCKET, ...) */
function networkCode(error) {
  /** @type {any} */
  let cause = error;
  /** @type {string | undefined} */
  let code;
  for (let depth = 0; cause && depth < 5; depth++) {
    if (typeof cause.code === 'string') {
      code = cause.code;
    }
    cause = cause.cause;
  }
  return code;
}

/** @param {unknown} error what went wrong, from the deepest cause (fetch's own message is only "fetch failed") */
function networkReason(error) {
  /** @type {any} */
  let cause = error;
  let reason = error instanceof Error ? error.message : String(error);
  for (let depth = 0; cause && depth < 5; depth++) {
    if (cause instanceof Error && cause.message && cause.message !== 'fetch failed') {
      reason = cause.message;
    }
    if (cause instanceof AggregateError && cause.errors.length) {
      cause = cause.errors[0];
      continue;
    }
    cause = cause.cause;
  }
  if (error instanceof Error && error.name === 'TimeoutError') {
    return `no answer in ${READ_TIMEOUT_MS / 1000} s`;
  }
  return reason.split('\n')[0];
}
