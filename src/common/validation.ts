import { ValidationError, ValidationPipe } from '@nestjs/common';
import { AppError } from './app-error.js';

/** Whitelist validation that rejects unknown fields and names every offending field in one message. */
export function createValidationPipe(): ValidationPipe {
  return new ValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: true,
    transform: true,
    transformOptions: { enableImplicitConversion: false },
    validationError: { target: false, value: false },
    exceptionFactory: (errors) => AppError.validation(describeValidationErrors(errors)),
  });
}

export function describeValidationErrors(errors: ValidationError[], prefix = ''): string {
  const parts: string[] = [];
  for (const error of errors) {
    const path = prefix ? `${prefix}.${error.property}` : error.property;
    for (const text of Object.values(error.constraints ?? {})) {
      parts.push(text.startsWith(error.property) ? `${path}${text.slice(error.property.length)}` : `${path}: ${text}`);
    }
    if (error.children?.length) {
      parts.push(describeValidationErrors(error.children, path));
    }
  }
  return parts.filter(Boolean).join('; ');
}
