import { type ArgumentsHost, Logger } from '@nestjs/common';
import { jest } from '@jest/globals';
import { databaseError } from '../../test/support/database-error.js';
import { AllExceptionsFilter } from './all-exceptions.filter.js';
import { AppError } from './app-error.js';

/** What the filter answers for `exception`: status and body (and the headers it sets, into `headers`). */
function answer(
  exception: unknown,
  req?: object,
  headers: Record<string, string> = {},
): { status: number; body: unknown } {
  const sent: { status: number; body: unknown } = { status: 0, body: undefined };
  const res = {
    headersSent: false,
    setHeader: (name: string, value: string) => ((headers[name] = value), res),
    status: (code: number) => ((sent.status = code), res),
    json: (body: unknown) => ((sent.body = body), res),
  };
  const host = {
    getType: () => 'http',
    switchToHttp: () => ({ getResponse: () => res, getRequest: () => req }),
  } as unknown as ArgumentsHost;
  new AllExceptionsFilter().catch(exception, host);
  return sent;
}

describe(AllExceptionsFilter.name, () => {
  it('answers a PostgreSQL data exception (class 22) with a 400 that names no column type, table or SQL', () => {
    for (const [code, message] of [
      ['22001', 'value too long for type character varying(500)'],
      ['22021', 'invalid byte sequence for encoding "UTF8": 0x00'],
      ['22P02', 'invalid input syntax for type uuid: "x"'],
      ['22008', 'date/time field value out of range'],
    ]) {
      const { status, body } = answer(databaseError(code, message));
      expect(status).toBe(400);
      expect(body).toEqual({ status: 400, error: 'Bad Request', message: expect.stringMatching(/cannot be stored/) });
      expect(JSON.stringify(body)).not.toMatch(/varying|UTF8|uuid|field value/);
    }
  });

  it('keeps other database errors a 500 that leaks nothing', () => {
    const { status, body } = answer(databaseError('23505', 'duplicate key value violates unique constraint "uq_x"'));
    expect(status).toBe(500);
    expect(JSON.stringify(body)).not.toMatch(/uq_x|duplicate/);
  });

  it('answers 503 naming the database or the key-value store when it does not answer, leaking nothing', () => {
    const database = { status: 503, error: 'Service Unavailable', message: 'The database is unavailable; retry later' };
    for (const error of [
      Object.assign(new Error('connect ECONNREFUSED 10.0.0.5:5432'), { code: 'ECONNREFUSED' }),
      databaseError('57P01', 'terminating connection due to administrator command'),
      databaseError('08006', 'connection failure'),
      databaseError('53300', 'sorry, too many clients already'),
      new Error('Connection terminated unexpectedly'),
      new Error('timeout exceeded when trying to connect'),
    ]) {
      expect(answer(error)).toEqual({ status: 503, body: database });
    }
    const retriesUsedUp = Object.assign(new Error('Reached the max retries per request limit (which is 2).'), {
      name: 'MaxRetriesPerRequestError',
    });
    for (const error of [retriesUsedUp, new Error('Connection is closed.'), new Error('Command timed out')]) {
      expect(answer(error)).toEqual({
        status: 503,
        body: { status: 503, error: 'Service Unavailable', message: 'The key-value store is unavailable; retry later' },
      });
    }
    expect(answer(new Error('Cannot read properties of undefined')).status).toBe(500);
  });

  it('answers a statement cancelled by the statement timeout with a 503 that shows no SQL', () => {
    const { status, body } = answer(databaseError('57014', 'canceling statement due to statement timeout'));
    expect(status).toBe(503);
    expect(body).toEqual({
      status: 503,
      error: 'Service Unavailable',
      message: expect.stringMatching(/took longer than the database allows/),
    });
    expect(JSON.stringify(body)).not.toMatch(/canceling|statement timeout/);
  });

  it('answers a transaction rolled back for a concurrent one (deadlock, serialization, lock timeout) 503, retry after 1 s', () => {
    for (const [code, message] of [
      ['40P01', 'deadlock detected'],
      ['40001', 'could not serialize access due to concurrent update'],
      ['55P03', 'canceling statement due to lock timeout'],
    ]) {
      const headers: Record<string, string> = {};
      const sent = answer(databaseError(code, message), undefined, headers);
      expect(sent).toEqual({
        status: 503,
        body: { status: 503, error: 'Service Unavailable', message: expect.stringMatching(/rolled back whole.*retry it/) },
      });
      expect(headers).toEqual({ 'Retry-After': '1' });
      expect(JSON.stringify(sent.body)).not.toMatch(/deadlock|serialize|lock timeout/);
    }
  });

  it('answers an AppError with its own status and message', () => {
    expect(answer(AppError.conflict('Run 4 is finished'))).toEqual({
      status: 409,
      body: { status: 409, error: 'Conflict', message: 'Run 4 is finished' },
    });
  });

  describe('a client that went away (issue 34, item 3)', () => {
    const logged = () => {
      const spies = (['error', 'warn', 'log', 'debug'] as const).map((level) =>
        jest.spyOn(Logger.prototype, level).mockImplementation(() => undefined),
      );
      return {
        at: () =>
          spies.flatMap((spy, i) =>
            spy.mock.calls.map((call) => `${['error', 'warn', 'log', 'debug'][i]} ${String(call[0])}`),
          ),
        restore: () => spies.forEach((spy) => spy.mockRestore()),
      };
    };
    const cutShort = {
      method: 'POST',
      url: '/api/import/junit?projectId=1',
      errored: Object.assign(new Error('aborted'), { code: 'ECONNRESET' }),
      socket: {},
    };

    it('logs a client abort at debug level, not as the database unavailable, and answers it 400', () => {
      const log = logged();
      try {
        const { status } = answer(Object.assign(new Error('aborted'), { code: 'ECONNRESET' }), cutShort);
        expect(status).toBe(400);
        expect(log.at()).toEqual([
          expect.stringMatching(/^debug Client abort: .*POST \/api\/import\/junit was/),
        ]);
      } finally {
        log.restore();
      }
    });

    it('keeps logging a database that went away as an outage (503, warn), even while a client is gone', () => {
      const log = logged();
      try {
        const reset = Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET', syscall: 'read' });
        expect(answer(reset, cutShort).status).toBe(503);
        expect(log.at()).toEqual(['warn 503, the database is unavailable: read ECONNRESET']);
      } finally {
        log.restore();
      }
    });
  });
});
