import { Injectable, PipeTransform } from '@nestjs/common';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { AppError } from '../common/app-error.js';
import { isStorableText, isTimestamp, STORABLE_TEXT_HINT, TIMESTAMP_HINT, UUID } from '../common/formats.js';
import { RESULT_STATUSES } from './entities.js';

const MAX_MESSAGES = 20;

/**
 * The results batch as a compiled JSON Schema, with exactly the rules of ResultItemDto (which documents it in
 * the OpenAPI). class-validator spent ~28 ms on a batch of 1000 results, more than everything else in the
 * request together; the compiled schema checks the same batch in well under a millisecond.
 */
function resultItemSchema(uuidRequired: boolean): object {
  // Text PostgreSQL can store as given, and timestamps and UUIDs it can read: refused here, by index and field,
  // rather than failing the write later (for V2, in a consumer, after the 202).
  const text = (min: number, max: number) => ({ type: 'string', minLength: min, maxLength: max, format: 'text' });
  return {
    type: 'object',
    additionalProperties: false,
    required: uuidRequired ? ['uuid', 'name', 'status'] : ['name', 'status'],
    properties: {
      uuid: { type: 'string', format: 'uuid' },
      testId: text(1, 500),
      name: { ...text(1, 1000), pattern: '\\S' },
      suite: text(0, 1000),
      status: { enum: [...RESULT_STATUSES] },
      durationMs: { type: 'integer', minimum: 0, maximum: 31_536_000_000 },
      message: text(0, 65_536),
      trace: text(0, 1_048_576),
      startedAt: { type: 'string', format: 'timestamp' },
      attributes: {
        type: 'object',
        maxProperties: 50,
        propertyNames: { minLength: 1, maxLength: 100, format: 'text' },
        additionalProperties: text(0, 1000),
      },
      retry: { type: 'integer', minimum: 0, maximum: 1000 },
    },
  };
}

function batchSchema(maxItems: number, uuidRequired: boolean): object {
  return {
    type: 'object',
    additionalProperties: false,
    required: ['results'],
    properties: { results: { type: 'array', minItems: 1, maxItems, items: resultItemSchema(uuidRequired) } },
  };
}

const ajv = new Ajv({ allErrors: true, strict: true });
ajv.addFormat('uuid', UUID);
ajv.addFormat('timestamp', isTimestamp);
ajv.addFormat('text', isStorableText);

const validators = new Map<string, ValidateFunction>();

function validatorFor(maxItems: number, uuidRequired: boolean): ValidateFunction {
  const key = `${maxItems}:${uuidRequired}`;
  let validate = validators.get(key);
  if (!validate) {
    validate = ajv.compile(batchSchema(maxItems, uuidRequired));
    validators.set(key, validate);
  }
  return validate;
}

/**
 * The validated body, typed as its DTO but declared through this alias so that the global ValidationPipe
 * (which runs on class-typed parameters) leaves it to the compiled schema.
 */
export type ResultsBatch<T> = T & { readonly __validatedBySchema?: never };

/** Validates a `{results: [...]}` body; every problem is named by index and field in one 400. */
@Injectable()
export class ResultsBatchPipe implements PipeTransform<unknown, unknown> {
  private readonly validate: ValidateFunction;

  constructor(
    private readonly maxItems: number,
    uuidRequired: boolean,
  ) {
    this.validate = validatorFor(maxItems, uuidRequired);
  }

  transform(body: unknown): unknown {
    if (!this.validate(body)) {
      const messages = new Set((this.validate.errors ?? []).map((e) => describe(e, this.maxItems)));
      // An empty name is also blank: saying it once is enough. (propertyNames' own summary is the empty message.)
      const unique = [...messages].filter(
        (m) => m && !(m.endsWith(' must not be blank') && messages.has(m.replace(/ must not be blank$/, ' must not be empty'))),
      );
      const shown = unique.slice(0, MAX_MESSAGES).join('; ');
      throw AppError.validation(unique.length > MAX_MESSAGES ? `${shown}; and ${unique.length - MAX_MESSAGES} more` : shown);
    }
    return body;
  }
}

function describe(error: ErrorObject, maxItems: number): string {
  const path = error.instancePath.split('/').filter(Boolean).join('.');
  const field = (name: string) => (path ? `${path}.${name}` : name);
  const p = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return `${field(String(p.missingProperty))} is required`;
    case 'additionalProperties':
      return `${field(String(p.additionalProperty))}: property ${String(p.additionalProperty)} should not exist`;
    case 'enum':
      return `${path} must be one of: ${(p.allowedValues as string[]).join(', ')}`;
    case 'maxItems':
      return `${path} must hold at most ${maxItems} results`;
    case 'minItems':
      return `${path} must hold at least one result`;
    case 'format':
      if (error.propertyName !== undefined) {
        return `${path}: attribute names ${STORABLE_TEXT_HINT}`;
      }
      return p.format === 'text' ? `${path} ${STORABLE_TEXT_HINT}` : `${path} must be ${p.format === 'uuid' ? 'a UUID' : TIMESTAMP_HINT}`;
    case 'pattern':
      return `${path} must not be blank`;
    // Worded as the class-validator rules of every other body (MaxChars); lengths count code points, as PostgreSQL's.
    case 'maxLength':
      return error.propertyName !== undefined
        ? `${path}: attribute names must be at most ${String(p.limit)} characters`
        : `${path} must be shorter than or equal to ${String(p.limit)} characters`;
    case 'minLength':
      return error.propertyName !== undefined ? `${path}: attribute names must not be empty` : `${path} must not be empty`;
    case 'propertyNames':
      return ''; // the failing name's own rule (maxLength, minLength, format) is reported
    case 'maxProperties':
      return `${path} must hold at most ${String(p.limit)} attributes`;
    case 'type':
      return `${path || 'the body'} must be ${p.type === 'integer' ? 'a whole number' : `of type ${String(p.type)}`}`;
    default:
      return `${path || 'the body'} ${error.message ?? 'is invalid'}`;
  }
}
