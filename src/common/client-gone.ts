import type { IncomingMessage } from 'node:http';
import { HttpException } from '@nestjs/common';
import { AppError, HTTP_STATUS_OF } from './app-error.js';

/** Connections answered with 408 because their request did not arrive in time (app.factory's clientError). */
const TIMED_OUT = new WeakSet<object>();

/** Marks a connection as cut off for taking too long: what its request's body reader fails with next is that. */
export function markTimedOut(socket: object): void {
  TIMED_OUT.add(socket);
}

/**
 * Node fails a request whose connection closed before its body arrived whole with `Error('aborted')`, code
 * ECONNRESET, which is also a code of a database that went away ("read ECONNRESET", from the database's socket):
 * told apart by the message. body-parser says `request.aborted` (ECONNABORTED).
 */
function isAbort(error: unknown): boolean {
  const { code, message, type } = (error ?? {}) as { code?: unknown; message?: unknown; type?: unknown };
  return (code === 'ECONNRESET' && message === 'aborted') || type === 'request.aborted';
}

/** What a reader of a body sees when the body stops (`premature close`, busboy's "Unexpected end of form"). */
const CUT_SHORT = /^(Premature close|Unexpected end of (form|multipart data))$/;

/** Whether an error is one of those, or one the handler made of it that blames the request (a 4xx). */
function followsFromCutShort(error: unknown): boolean {
  const { code, message, status } = (error ?? {}) as { code?: unknown; message?: unknown; status?: unknown };
  const answer =
    error instanceof AppError
      ? HTTP_STATUS_OF[error.code]
      : error instanceof HttpException
        ? error.getStatus()
        : status;
  return (
    code === 'ERR_STREAM_PREMATURE_CLOSE' ||
    (typeof message === 'string' && CUT_SHORT.test(message)) ||
    (typeof answer === 'number' && answer >= 400 && answer < 500)
  );
}

/**
 * Whether an error thrown while a request was handled says the client went away, not the service: the request was
 * cut off before its body arrived whole because the client closed the connection, or because it stalled past
 * SVC_HTTP_REQUEST_TIMEOUT and was answered 408. That is Node's abort error itself, or what a body reader made of
 * it, when the request was ended by it (`req.errored`: a request the service stopped reading itself, after a 413
 * say, has none). Undefined for anything else: a database that went away, a bug.
 */
export function clientGone(
  error: unknown,
  req: Pick<IncomingMessage, 'socket' | 'errored'> | undefined,
): 'aborted' | 'timed out' | undefined {
  const gone = isAbort(error) || (isAbort(req?.errored) && followsFromCutShort(error));
  if (!gone) {
    return undefined;
  }
  // Socket-less callers (the filter's unit tests) have no connection to look up.
  return req?.socket && TIMED_OUT.has(req.socket) ? 'timed out' : 'aborted';
}
