import { HttpStatus } from '@nestjs/common';

/** Every rule a service can break, independent of the transport that reports it. */
export enum ErrorCode {
  VALIDATION = 'VALIDATION',
  UNAUTHENTICATED = 'UNAUTHENTICATED',
  FORBIDDEN = 'FORBIDDEN',
  NOT_FOUND = 'NOT_FOUND',
  CONFLICT = 'CONFLICT',
  PAYLOAD_TOO_LARGE = 'PAYLOAD_TOO_LARGE',
  UNSUPPORTED_MEDIA_TYPE = 'UNSUPPORTED_MEDIA_TYPE',
  UNPROCESSABLE = 'UNPROCESSABLE',
  RATE_LIMITED = 'RATE_LIMITED',
  UNAVAILABLE = 'UNAVAILABLE',
  UPGRADE_REQUIRED = 'UPGRADE_REQUIRED',
  INTERNAL = 'INTERNAL',
}

export const HTTP_STATUS_OF: Record<ErrorCode, HttpStatus> = {
  [ErrorCode.VALIDATION]: HttpStatus.BAD_REQUEST,
  [ErrorCode.UNAUTHENTICATED]: HttpStatus.UNAUTHORIZED,
  [ErrorCode.FORBIDDEN]: HttpStatus.FORBIDDEN,
  [ErrorCode.NOT_FOUND]: HttpStatus.NOT_FOUND,
  [ErrorCode.CONFLICT]: HttpStatus.CONFLICT,
  [ErrorCode.PAYLOAD_TOO_LARGE]: HttpStatus.PAYLOAD_TOO_LARGE,
  [ErrorCode.UNSUPPORTED_MEDIA_TYPE]: HttpStatus.UNSUPPORTED_MEDIA_TYPE,
  [ErrorCode.UNPROCESSABLE]: HttpStatus.UNPROCESSABLE_ENTITY,
  [ErrorCode.RATE_LIMITED]: HttpStatus.TOO_MANY_REQUESTS,
  [ErrorCode.UNAVAILABLE]: HttpStatus.SERVICE_UNAVAILABLE,
  [ErrorCode.UPGRADE_REQUIRED]: 426 as HttpStatus,
  [ErrorCode.INTERNAL]: HttpStatus.INTERNAL_SERVER_ERROR,
};

/** The one error services throw; the HTTP filter, the WebSocket gateway and queue consumers map `code`. */
export class AppError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    /** With RATE_LIMITED: when the client may retry (the Retry-After header); 60 when not given. */
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
    this.name = 'AppError';
  }

  static notFound(message: string): AppError {
    return new AppError(ErrorCode.NOT_FOUND, message);
  }

  static validation(message: string): AppError {
    return new AppError(ErrorCode.VALIDATION, message);
  }

  static unauthenticated(message = 'Authentication is required'): AppError {
    return new AppError(ErrorCode.UNAUTHENTICATED, message);
  }

  static forbidden(message: string): AppError {
    return new AppError(ErrorCode.FORBIDDEN, message);
  }

  static conflict(message: string): AppError {
    return new AppError(ErrorCode.CONFLICT, message);
  }

  static rateLimited(message = 'Too many requests; wait 60 seconds and retry', retryAfterSeconds = 60): AppError {
    return new AppError(ErrorCode.RATE_LIMITED, message, retryAfterSeconds);
  }

  static unprocessable(message: string): AppError {
    return new AppError(ErrorCode.UNPROCESSABLE, message);
  }

  static payloadTooLarge(message: string): AppError {
    return new AppError(ErrorCode.PAYLOAD_TOO_LARGE, message);
  }
}
