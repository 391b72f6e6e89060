import { ValidationError, ValidationPipe } from '@nestjs/common';
import { AppError } from './app-error.js';

/**
 * Whitelist validation that rejects unknown fields and names every offending field in one message. The
 * failing values stay in the errors (`value`) only for describeValidationErrors, which never prints them.
 */
export function createValidationPipe(): ValidationPipe {
  return new ValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: true,
    transform: true,
    transformOptions: { enableImplicitConversion: false },
    validationError: { target: false, value: true },
    exceptionFactory: (errors) => AppError.validation(describeValidationErrors(errors)),
  });
}

/**
 * class-validator's checks of what a value is. When one of them fails, the field's other messages follow from
 * it ("must not be blank", "must be shorter than…" for a number) and would only mislead.
 */
const TYPE_CHECKS = new Set(['isDefined', 'isString', 'isInt', 'isNumber', 'isBoolean', 'isArray', 'isObject', 'isDate', 'isEnum']);

/**
 * One message for all the fields that failed, each named by its path: `<field> is required` for a missing one
 * (validated only if not optional), only what the value should be when it is of another type, else each
 * failed rule once. Needs the errors with their values (`validationError.value`); they are not printed.
 */
export function describeValidationErrors(errors: ValidationError[], prefix = ''): string {
  const parts: string[] = [];
  for (const error of errors) {
    const path = prefix ? `${prefix}.${error.property}` : error.property;
    const constraints = Object.entries(error.constraints ?? {});
    const typeChecks = constraints.filter(([name]) => TYPE_CHECKS.has(name));
    const missing = 'value' in error && error.value === undefined && constraints.length > 0;
    if (missing) {
      parts.push(`${path} is required`);
    } else {
      const texts = new Set((typeChecks.length ? typeChecks : constraints).map(([, text]) => text));
      for (const text of texts) {
        parts.push(text.startsWith(error.property) ? `${path}${text.slice(error.property.length)}` : `${path}: ${text}`);
      }
    }
    if (error.children?.length) {
      parts.push(describeValidationErrors(error.children, path));
    }
  }
  return parts.filter(Boolean).join('; ');
}
