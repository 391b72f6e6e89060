import type { IncomingMessage } from 'node:http';

/** Connections answered with 408 because their request did not arrive in time (app.factory's clientError). */
const TIMED_OUT = new WeakSet<object>();

/** Marks a connection as cut off for taking too long: what its request's body reader fails with next is that. */
export function markTimedOut(socket: object): void {
  TIMED_OUT.add(socket);
}

/**
 * Stream errors that a reader of the request body sees when the client stops sending (`premature close`, busboy's
 * "Unexpected end of form"): the client's doing only when the request was cut short, checked on the request.
 */
const CUT_SHORT = /^(Premature close|Unexpected end of (form|multipart data))$/;

/**
 * Whether an error thrown while a request was handled says the client went away, not the service: the request was
 * cut off before its body arrived whole (the client closed the connection, or it stalled past
 * SVC_HTTP_REQUEST_TIMEOUT and was answered 408). Undefined for anything else, database errors included.
 *
 * Node fails a request whose client closed the connection mid-body with `Error('aborted')`, code ECONNRESET,
 * which is also a code of a database that went away ("read ECONNRESET", from the database's socket, with a
 * `syscall`): told apart by the message. body-parser says `request.aborted` (ECONNABORTED).
 */
export function clientGone(
  error: unknown,
  req: Pick<IncomingMessage, 'complete' | 'socket'> | undefined,
): 'aborted' | 'timed out' | undefined {
  const { code, message, type } = (error ?? {}) as { code?: unknown; message?: unknown; type?: unknown };
  const cutShort = req !== undefined && !req.complete;
  const gone =
    (code === 'ECONNRESET' && message === 'aborted') ||
    type === 'request.aborted' ||
    (cutShort &&
      (code === 'ERR_STREAM_PREMATURE_CLOSE' || (typeof message === 'string' && CUT_SHORT.test(message))));
  if (!gone) {
    return undefined;
  }
  // Socket-less callers (the filter's unit tests) have no connection to look up.
  return req?.socket && TIMED_OUT.has(req.socket) ? 'timed out' : 'aborted';
}
