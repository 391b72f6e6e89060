import { sqlStateOf } from './db-errors.js';

/** The socket errors of a dependency that does not answer (refused, reset, unreachable, not resolved). */
const SOCKET_ERRORS = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/**
 * SQLSTATEs that describe the database, not the data: connection exceptions (08), insufficient resources (53),
 * operator intervention and shutdown (57P0x).
 */
const DATABASE_AWAY_SQLSTATE = /^(08|53|57P0)/;

/** node-postgres and its pool, when the server went away or never answered. */
const DATABASE_GONE =
  /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error/i;

/** ioredis, when Redis does not answer: the connection closed, a command timed out (retries used up: by name). */
const KV_GONE = /^(Connection is closed\.|Command timed out)$/;

/**
 * Whether an error says the database is away or cannot serve (node-postgres's errors, and socket errors: the
 * database is the one connection a request or a consumer waits on that reports them unwrapped).
 */
export function isDatabaseAway(error: unknown): boolean {
  const code = sqlStateOf(error);
  if (code !== undefined && (SOCKET_ERRORS.has(code) || DATABASE_AWAY_SQLSTATE.test(code))) {
    return true;
  }
  const message = (error as { message?: unknown } | null)?.message;
  return typeof message === 'string' && DATABASE_GONE.test(message);
}

/**
 * Which dependency an error says is away, for a 503 that names it instead of a 500: the key-value store
 * (ioredis's errors) or the database. Undefined for anything else.
 */
export function unavailablePart(error: unknown): 'database' | 'key-value store' | undefined {
  // Duck-typed, not `instanceof Error`: node's socket errors may come from another realm (Jest's VM modules).
  const { name, message } = (error ?? {}) as { name?: unknown; message?: unknown };
  if (name === 'MaxRetriesPerRequestError' || (typeof message === 'string' && KV_GONE.test(message))) {
    return 'key-value store';
  }
  return isDatabaseAway(error) ? 'database' : undefined;
}
