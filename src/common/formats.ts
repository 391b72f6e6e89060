import { isEmail, ValidateBy, ValidateIf, type ValidationOptions } from 'class-validator';
import { codePointOf, formatCharacterIn } from './text.js';

/**
 * A UUID as class-validator's IsUUID('all') and Nest's ParseUUIDPipe take it (RFC 9562: versions 1-8 with the
 * RFC variant, or the nil and max UUIDs), so that a run's uuid, a result's uuid and a path's runUuid follow one
 * rule. Unlike JSON Schema's `uuid` format it admits no `urn:uuid:` prefix, which PostgreSQL would refuse.
 */
export const UUID =
  /^(?:[0-9a-f]{8}-[0-9a-f]{4}-[1-8][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}|00000000-0000-0000-0000-000000000000|ffffffff-ffff-ffff-ffff-ffffffffffff)$/i;

/**
 * The timestamps the API takes: ISO 8601 extended format with Z or an offset (`2026-11-22T10:15:00.000Z`,
 * `2026-11-22T11:15+01:00`; seconds and fraction optional) or a bare date (`2026-11-22`, midnight UTC). Without
 * an offset a time would be the server's local time, so it is refused. Narrower than ISO 8601 on purpose: week dates, ordinal dates and the basic
 * format (`20261122T101500Z`) pass class-validator's IsDateString but JavaScript cannot read them; a leap second,
 * February 30 or a year outside 1-9999 (after the offset is applied) cannot be stored by PostgreSQL, or would be
 * silently moved. Such input is refused at the door, never failing later in a write or a queue consumer.
 */
const SHAPE =
  /^(\d{4})-(\d{2})-(\d{2})(?:[Tt](\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(?:[Zz]|[+-](\d{2}):(\d{2})))?$/;

const MIN = Date.parse('0001-01-01T00:00:00Z');
const MAX = Date.parse('9999-12-31T23:59:59.999Z');

function daysIn(year: number, month: number): number {
  return month === 2
    ? year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0)
      ? 29
      : 28
    : [4, 6, 9, 11].includes(month)
      ? 30
      : 31;
}

export function isTimestamp(value: unknown): value is string {
  if (typeof value !== 'string') {
    return false;
  }
  const m = SHAPE.exec(value);
  if (!m) {
    return false;
  }
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (month < 1 || month > 12 || day < 1 || day > daysIn(year, month)) {
    return false;
  }
  if (m[4] !== undefined && (Number(m[4]) > 23 || Number(m[5]) > 59 || Number(m[6] ?? 0) > 59)) {
    return false;
  }
  if (m[7] !== undefined && (Number(m[7]) > 23 || Number(m[8]) > 59)) {
    return false;
  }
  const time = Date.parse(value);
  return time >= MIN && time <= MAX;
}

/**
 * Text PostgreSQL can store as given: no NUL (text and jsonb refuse it) and no unpaired UTF-16 surrogate (jsonb
 * refuses its `\\ud800` escape; a text column would silently get U+FFFD instead).
 */
export function isStorableText(value: unknown): value is string {
  return typeof value === 'string' && !value.includes('\0') && value.isWellFormed();
}

export const STORABLE_TEXT_HINT = 'must not contain NUL characters or unpaired surrogates';

export const TIMESTAMP_HINT =
  'an ISO 8601 timestamp with Z or a UTC offset, such as 2026-11-22T10:15:00.000Z, or a date such as 2026-11-22';

/** A class-validator decorator for one rule, its message naming the property. */
function rule(
  name: string,
  validate: (value: unknown) => boolean,
  problem: string,
  options?: ValidationOptions,
): PropertyDecorator {
  return ValidateBy(
    { name, validator: { validate, defaultMessage: (args) => `${args?.property} ${problem}` } },
    options,
  );
}

/**
 * At most `max` characters as PostgreSQL's varchar(n) counts them (code points). class-validator's MaxLength
 * leaves out U+FE0E and U+FE0F, so 500 of `a\uFE0F` passed MaxLength(500) and overflowed varchar(500).
 */
export function MaxChars(max: number, options?: ValidationOptions): PropertyDecorator {
  const fits = (value: unknown) =>
    typeof value === 'string' && (value.length <= max || [...value].length <= max);
  return rule('maxChars', fits, `must be shorter than or equal to ${max} characters`, options);
}

/** class-validator's decorator for {@link isStorableText}. */
export function IsStorableText(options?: ValidationOptions): PropertyDecorator {
  return rule('isStorableText', isStorableText, STORABLE_TEXT_HINT, options);
}

/** class-validator's decorator for {@link isTimestamp}. */
export function IsTimestamp(options?: ValidationOptions): PropertyDecorator {
  return rule('isTimestamp', isTimestamp, `must be ${TIMESTAMP_HINT}`, options);
}

/**
 * class-validator's IsEmail, but false rather than a thrown URIError (a 500) for text with an unpaired surrogate:
 * validator.js measures the local part with encodeURI.
 */
export function IsEmailAddress(options?: ValidationOptions): PropertyDecorator {
  const valid = (value: unknown) => typeof value === 'string' && value.isWellFormed() && isEmail(value);
  return rule('isEmail', valid, 'must be an email address', options);
}

/**
 * Names people type (projects, groups, runs, users, API keys) must not hold invisible format characters (see
 * formatCharacterIn): a name that reads as something it is not is refused, naming the field and the character.
 */
export function NoFormatCharacters(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'noFormatCharacters',
      validator: {
        validate: (value: unknown) => typeof value !== 'string' || formatCharacterIn(value) === undefined,
        defaultMessage: (args) => {
          const found = typeof args?.value === 'string' ? formatCharacterIn(args.value) : undefined;
          return `${args?.property} must not contain invisible formatting characters${found ? ` (it holds ${codePointOf(found)})` : ''}`;
        },
      },
    },
    options,
  );
}

/**
 * A field a request may leave out, but not set to null (class-validator's IsOptional lets null through, and a null
 * for a column that has none then fails in the database as a 500): validated whenever it is present.
 */
export function OmittableNotNull(): PropertyDecorator {
  return ValidateIf((_: object, value: unknown) => value !== undefined);
}
