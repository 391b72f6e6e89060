import { ArgumentsHost, Catch, ExceptionFilter, HttpException, HttpStatus, Logger } from '@nestjs/common';
import type { Request, Response } from 'express';
import { AppError, HTTP_STATUS_OF } from './app-error.js';
import { clientGone } from './client-gone.js';
import { isDataException, isTransactionConflict, QUERY_CANCELED, sqlStateOf } from './db-errors.js';
import { errorBody } from './error-body.js';
import { unavailablePart } from './outages.js';

interface HttpLikeError {
  status?: number;
  statusCode?: number;
  type?: string;
  expose?: boolean;
  message?: string;
  /** zlib's, for a body that its Content-Encoding says is compressed and is not. */
  code?: unknown;
}

/** Writes `{status, error, message}` for everything thrown during an HTTP request; never leaks internals. */
@Catch()
export class AllExceptionsFilter implements ExceptionFilter {
  private readonly logger = new Logger('HttpErrors');

  catch(exception: unknown, host: ArgumentsHost): void {
    if (host.getType() !== 'http') {
      throw exception;
    }
    const http = host.switchToHttp();
    const res = http.getResponse<Response>();
    const req = http.getRequest<Request | undefined>();
    if (sqlStateOf(exception) === QUERY_CANCELED) {
      this.answerCancelled(exception as Error, res);
      return;
    }
    if (isTransactionConflict(exception)) {
      this.answerConflict(exception as Error, res);
      return;
    }
    const gone = clientGone(exception, req);
    if (gone) {
      this.clientGone(gone, req, res);
      return;
    }
    const refusedByDatabase = isDataException(exception);
    const away = refusedByDatabase ? undefined : unavailablePart(exception);
    const { status, message } = refusedByDatabase
      ? { status: 400, message: 'The request holds a value that cannot be stored: too long, out of range or of a form not accepted' }
      : away
        ? { status: 503, message: `The ${away} is unavailable; retry later` }
        : this.describe(exception);
    if (away) {
      // An outage, not a bug: one line a request, no stack (GET /api/health/ready names the part too).
      this.logger.warn(`503, the ${away} is unavailable: ${(exception as Error).message}`);
    } else if (refusedByDatabase) {
      // Input the validators let through but PostgreSQL refused: a 400 for the client, a gap to close for us.
      this.logger.warn(`400 for a value the database refused (SQLSTATE ${sqlStateOf(exception)}): ${(exception as Error).message}`);
    } else if (status >= 500 && exception instanceof AppError) {
      // An expected outage (broker away, ...): one line, no stack.
      this.logger.warn(`${status} ${exception.message}`);
    } else if (status >= 500) {
      this.logger.error(exception instanceof Error ? (exception.stack ?? exception.message) : String(exception));
    }
    if (res.headersSent) {
      res.end();
      return;
    }
    if (status === HttpStatus.TOO_MANY_REQUESTS) {
      res.setHeader('Retry-After', String((exception instanceof AppError && exception.retryAfterSeconds) || 60));
    }
    res.status(status).json(errorBody(status, message));
  }

  /**
   * A statement PostgreSQL cancelled: by the statement timeout (SVC_DB_STATEMENT_TIMEOUT), a 503 the client can act
   * on; or because the read's client went away (cancelReadsOnDisconnect), when there is no one left to answer.
   * Neither is a fault of the service, and neither gets a stack.
   */
  private answerCancelled(exception: Error, res: Response): void {
    if (res.destroyed || res.headersSent) {
      this.logger.debug(`A read whose client went away was cancelled: ${exception.message}`);
      res.end();
      return;
    }
    this.logger.warn(`503, a statement ran past the statement timeout: ${exception.message}`);
    res.setHeader('Retry-After', '60');
    res
      .status(503)
      .json(
        errorBody(
          503,
          'The request took longer than the database allows and was cancelled; narrow it (a filter, a smaller page) or retry later',
        ),
      );
  }

  /**
   * A transaction PostgreSQL rolled back because of a concurrent one (a deadlock between two writers of the same
   * tests, a serialization failure, a lock not granted in time): nothing of the request was stored and the same
   * request can go through a moment later, so a 503 with a short Retry-After (the `tms` command retries a 503), not a
   * 500 with a stack.
   */
  private answerConflict(exception: Error, res: Response): void {
    this.logger.warn(
      `503, the transaction met a concurrent one (SQLSTATE ${sqlStateOf(exception)}): ${exception.message}`,
    );
    if (res.headersSent) {
      res.end();
      return;
    }
    res.setHeader('Retry-After', '1');
    res
      .status(503)
      .json(
        errorBody(
          503,
          'The request met a concurrent write of the same data and was rolled back whole (nothing of it was stored); retry it',
        ),
      );
  }

  /**
   * A client that closed its connection mid-request, or stalled until it was cut off (408): its doing, not the
   * service's, and frequent (a CI job cancelled mid-upload), so a line at a level that pages no one. Its status,
   * which no one receives, is what the metrics count: a 4xx, not an outage.
   */
  private clientGone(gone: 'aborted' | 'timed out', req: Request | undefined, res: Response): void {
    const what = req ? `${req.method} ${(req.originalUrl ?? req.url ?? '').split('?')[0]}` : 'a request';
    if (gone === 'timed out') {
      this.logger.log(`408, the request did not arrive in time (SVC_HTTP_REQUEST_TIMEOUT): ${what}`);
    } else {
      this.logger.debug(`Client abort: the client closed the connection before ${what} was received whole`);
    }
    if (!res.headersSent && !res.writableEnded) {
      const status = gone === 'timed out' ? HttpStatus.REQUEST_TIMEOUT : HttpStatus.BAD_REQUEST;
      res.status(status).json(errorBody(status, 'The request was not received whole'));
    }
  }

  private describe(exception: unknown): { status: number; message: string } {
    if (exception instanceof AppError) {
      return { status: HTTP_STATUS_OF[exception.code], message: exception.message };
    }
    if (exception instanceof HttpException) {
      return { status: exception.getStatus(), message: messageOf(exception) };
    }
    // Errors raised by Express's body parsers (http-errors) before Nest sees the request.
    const httpLike = exception as HttpLikeError | null;
    const status = httpLike?.status ?? httpLike?.statusCode;
    if (typeof status === 'number' && status >= 400 && status < 500) {
      return { status, message: bodyParserMessage(httpLike!, status) };
    }
    return { status: 500, message: 'An unexpected error occurred; it has been logged' };
  }
}

function messageOf(exception: HttpException): string {
  const response = exception.getResponse();
  if (typeof response === 'string') {
    return response;
  }
  const message = (response as { message?: unknown }).message;
  if (Array.isArray(message)) {
    return message.join('; ');
  }
  return typeof message === 'string' ? message : exception.message;
}

function bodyParserMessage(error: HttpLikeError, status: number): string {
  switch (error.type) {
    case 'entity.parse.failed':
      return 'The request body is not valid JSON';
    case 'entity.too.large':
      return 'The request body exceeds the size limit';
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return 'The request body uses an unsupported encoding';
    default:
      if (typeof error.code === 'string' && error.code.startsWith('Z_')) {
        return 'The request body is not what its Content-Encoding says: it could not be decompressed';
      }
      return error.expose && error.message ? error.message : (errorBody(status, '').error ?? 'Bad request');
  }
}
