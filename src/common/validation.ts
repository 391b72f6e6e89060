import { type ArgumentMetadata, ValidationError, ValidationPipe } from '@nestjs/common';
import { AppError } from './app-error.js';

/**
 * Objects whose keys are data chosen by the client (a run's `attributes`), not fields of a DTO: any key is
 * allowed there and kept as sent (the DTO copies them into an object without a prototype, see ownEntries).
 */
const FREE_FORM_MAPS = new Set(['attributes']);

/** The keys Nest's pipe deleted silently, in place, everywhere (free-form maps included). */
const PROTOTYPE_KEYS = new Set(['__proto__', 'prototype', 'constructor']);

/**
 * Refuses unknown fields named like members of a prototype as it refuses any other unknown field. Nest's pipe
 * deletes `__proto__`, `prototype` and `constructor` from the value in place (free-form maps included, so a
 * run's attribute named `constructor` vanished), and class-transformer then leaves out the keys naming members
 * of the DTO's prototype (`toString`, `hasOwnProperty`, `valueOf`, …): the whitelist saw neither, and
 * `{"constructor": "x"}` was accepted and ignored where `{"foo": "x"}` got 400.
 */
class StrictValidationPipe extends ValidationPipe {
  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    const result: unknown = await super.transform(value, metadata);
    const dropped = result === value ? undefined : droppedKey(value, result);
    if (dropped) {
      throw unknownField(dropped);
    }
    return result;
  }

  /** Called by the pipe before the value is transformed: refuse, rather than delete, what it would delete. */
  protected override stripProtoKeys(value: unknown): void {
    const found = prototypeKey(value);
    if (found) {
      throw unknownField(found);
    }
  }
}

function unknownField(path: string): AppError {
  return AppError.validation(`property ${path} should not exist`);
}

/**
 * The path of the first `__proto__`, `prototype` or `constructor` key, but for the keys of free-form maps
 * themselves (their values are checked: a map holds strings, and an object there must not reach
 * class-transformer with such a key, which crashed it).
 */
export function prototypeKey(value: unknown, isMap = false): string | undefined {
  // Recursion is bounded: bodies nest at most MAX_JSON_DEPTH levels (app.factory), query strings are flat.
  if (typeof value !== 'object' || value === null || ArrayBuffer.isView(value)) {
    return undefined;
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = prototypeKey(value[i]);
      if (found) {
        return `${i}.${found}`;
      }
    }
    return undefined;
  }
  for (const key of Object.keys(value)) {
    if (!isMap && PROTOTYPE_KEYS.has(key)) {
      return key;
    }
    const found = prototypeKey((value as Record<string, unknown>)[key], !isMap && FREE_FORM_MAPS.has(key));
    if (found) {
      return `${key}.${found}`;
    }
  }
  return undefined;
}

/** The first key (as a path) of the plain value that its transformed counterpart does not have. */
export function droppedKey(plain: unknown, transformed: unknown, prefix = ''): string | undefined {
  if (typeof plain !== 'object' || plain === null || typeof transformed !== 'object' || transformed === null) {
    return undefined;
  }
  if (Array.isArray(plain)) {
    if (!Array.isArray(transformed)) {
      return undefined;
    }
    for (let i = 0; i < plain.length; i++) {
      const found = droppedKey(plain[i], transformed[i], `${prefix}${i}.`);
      if (found) {
        return found;
      }
    }
    return undefined;
  }
  for (const key of Object.keys(plain)) {
    if (!Object.hasOwn(transformed, key)) {
      return `${prefix}${key}`;
    }
    const found = droppedKey((plain as Record<string, unknown>)[key], (transformed as Record<string, unknown>)[key], `${prefix}${key}.`);
    if (found) {
      return found;
    }
  }
  return undefined;
}

/**
 * Whitelist validation that rejects unknown fields and names every offending field in one message. The
 * failing values stay in the errors (`value`) only for describeValidationErrors, which never prints them.
 */
export function createValidationPipe(): ValidationPipe {
  return new StrictValidationPipe({
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
