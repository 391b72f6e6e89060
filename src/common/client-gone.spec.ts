import { databaseError } from '../../test/support/database-error.js';
import { AppError } from './app-error.js';
import { clientGone, markTimedOut } from './client-gone.js';

/** Node's error for a request whose client closed the connection mid-body (connResetException('aborted')). */
const aborted = () => Object.assign(new Error('aborted'), { code: 'ECONNRESET' });
/** body-parser's (raw-body's) for the same. */
const requestAborted = () =>
  Object.assign(new Error('request aborted'), { code: 'ECONNABORTED', type: 'request.aborted', status: 400 });
/** A request whose client went away before its body arrived whole: Node destroyed it with its abort error. */
const cutByClient = () => ({ errored: aborted(), socket: {} as never });
/** A request the service itself stopped reading (after a 413, say): destroyed without an error. */
const stoppedByService = () => ({ errored: null, socket: {} as never });

describe(clientGone.name, () => {
  it('tells a client that closed the connection mid-body, whichever reader saw it and whatever it made of it', () => {
    expect(clientGone(aborted(), cutByClient())).toBe('aborted');
    expect(clientGone(requestAborted(), cutByClient())).toBe('aborted');
    expect(clientGone(aborted(), undefined)).toBe('aborted');
    const premature = Object.assign(new Error('Premature close'), { code: 'ERR_STREAM_PREMATURE_CLOSE' });
    expect(clientGone(premature, cutByClient())).toBe('aborted');
    expect(clientGone(new Error('Unexpected end of form'), cutByClient())).toBe('aborted');
    expect(clientGone(AppError.validation('The upload was not received whole: aborted'), cutByClient())).toBe(
      'aborted',
    );
  });

  it('tells a request cut off with 408 (its connection marked) from an abort', () => {
    const req = cutByClient();
    markTimedOut(req.socket);
    expect(clientGone(aborted(), req)).toBe('timed out');
    expect(clientGone(requestAborted(), req)).toBe('timed out');
  });

  it('leaves a database that went away, a bug, and a body the service stopped reading itself alone', () => {
    const databaseReset = Object.assign(new Error('read ECONNRESET'), {
      code: 'ECONNRESET',
      syscall: 'read',
    });
    expect(clientGone(databaseReset, cutByClient())).toBeUndefined();
    expect(clientGone(new Error('Connection terminated unexpectedly'), cutByClient())).toBeUndefined();
    expect(clientGone(databaseError('57P01', 'x'), cutByClient())).toBeUndefined();
    expect(clientGone(new TypeError('Cannot read properties of undefined'), cutByClient())).toBeUndefined();
    // A multipart body whose closing boundary is missing, sent whole: the client's bad input (400), not an abort.
    expect(clientGone(new Error('Unexpected end of form'), stoppedByService())).toBeUndefined();
    expect(
      clientGone(AppError.payloadTooLarge('Over SVC_IMPORT_MAX_BYTES'), stoppedByService()),
    ).toBeUndefined();
  });
});
