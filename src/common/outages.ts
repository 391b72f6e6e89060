import { sqlStateOf } from './db-errors.js';

/** The socket errors of a dependency that does not answer (refused, reset, unreachable, not resolved). */
const SOCKET_ERRORS = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EPIPE',
]);

/**
 * PostgreSQL answering that it cannot serve: class 08 (connection exception), shutting down or starting up
 * (57P01-57P03), too many connections (53300).
 */
const DATABASE_AWAY = /^(08|57P0[123]$|53300$)/;

/** node-postgres and its pool, when the server went away or never answered. */
const DATABASE_GONE =
  /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error)/;

/** ioredis, when Redis does not answer: retries used up, the connection closed, a command timed out. */
const KV_GONE = /^(Connection is closed\.|Command timed out)$/;

/**
 * Which dependency an error says is away, for a 503 that names it instead of a 500: the key-value store
 * (ioredis's errors) or the database (node-postgres's, and socket errors: the only other connection a request
 * waits on). Undefined for anything else.
 */
export function unavailablePart(error: unknown): 'database' | 'key-value store' | undefined {
  // Not `instanceof Error`: node's socket errors may come from another realm (as under Jest's VM modules).
  const { name, message } = (error ?? {}) as { name?: unknown; message?: unknown };
  if (typeof message !== 'string') {
    return undefined;
  }
  if (name === 'MaxRetriesPerRequestError' || KV_GONE.test(message)) {
    return 'key-value store';
  }
  const code = sqlStateOf(error);
  if ((code && (SOCKET_ERRORS.has(code) || DATABASE_AWAY.test(code))) || DATABASE_GONE.test(message)) {
    return 'database';
  }
  return undefined;
}
