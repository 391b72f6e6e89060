import { clientGone, markTimedOut } from './client-gone.js';

/** Node's error for a request whose client closed the connection mid-body (connResetException('aborted')). */
const aborted = () => Object.assign(new Error('aborted'), { code: 'ECONNRESET' });
/** body-parser's (raw-body's) for the same. */
const requestAborted = () =>
  Object.assign(new Error('request aborted'), { code: 'ECONNABORTED', type: 'request.aborted', status: 400 });

describe(clientGone.name, () => {
  const cutShort = () => ({ complete: false, socket: {} as never });

  it('tells a client that closed the connection mid-body, whichever reader saw it', () => {
    expect(clientGone(aborted(), cutShort())).toBe('aborted');
    expect(clientGone(requestAborted(), cutShort())).toBe('aborted');
    expect(clientGone(aborted(), undefined)).toBe('aborted');
    const premature = Object.assign(new Error('Premature close'), { code: 'ERR_STREAM_PREMATURE_CLOSE' });
    expect(clientGone(premature, cutShort())).toBe('aborted');
    expect(clientGone(new Error('Unexpected end of form'), cutShort())).toBe('aborted');
  });

  it('tells a request cut off with 408 (its connection marked) from an abort', () => {
    const req = cutShort();
    markTimedOut(req.socket);
    expect(clientGone(aborted(), req)).toBe('timed out');
    expect(clientGone(requestAborted(), req)).toBe('timed out');
  });

  it('leaves a database that went away, and stream errors of a request received whole, to the outage handling', () => {
    const databaseReset = Object.assign(new Error('read ECONNRESET'), {
      code: 'ECONNRESET',
      syscall: 'read',
    });
    expect(clientGone(databaseReset, cutShort())).toBeUndefined();
    expect(clientGone(new Error('Connection terminated unexpectedly'), cutShort())).toBeUndefined();
    expect(
      clientGone(Object.assign(new Error('x'), { driverError: { code: '57P01' } }), cutShort()),
    ).toBeUndefined();
    // A multipart body whose closing boundary is missing, sent whole: the client's bad input (400), not an abort.
    expect(
      clientGone(new Error('Unexpected end of form'), { complete: true, socket: {} as never }),
    ).toBeUndefined();
    expect(clientGone(new Error('Cannot read properties of undefined'), cutShort())).toBeUndefined();
  });
});
