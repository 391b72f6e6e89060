import { validateSync } from 'class-validator';
import { isStorableText, isTimestamp, MaxChars, UUID } from './formats.js';

describe(isTimestamp.name, () => {
  it.each([
    '2026-11-22T10:15:00.000Z',
    '2026-11-22T10:15:00Z',
    '2026-11-22t10:15:00z',
    '2026-11-22T10:15:00.123456789+05:30',
    '2024-02-29T23:59:59-12:00',
    '2026-11-22',
    '2026-11-22T10:15Z',
    '2026-11-22T11:15+01:00',
    '0001-01-01T00:00:00Z',
    '9999-12-31T23:59:59.999Z',
    '0001-01-01T00:00:00-01:00',
  ])('takes %s', (value) => {
    expect(isTimestamp(value)).toBe(true);
  });

  it.each([
    ['a leap second', '2016-12-31T23:59:60Z'],
    ['hour 24', '2026-11-22T24:00:00Z'],
    ['February 30', '2026-02-30T00:00:00Z'],
    ['February 29 of a common year', '2100-02-29'],
    ['month 13', '2026-13-01'],
    ['an offset of 24 hours', '2026-11-22T10:15:00+24:00'],
    ['year 0', '0000-06-01T00:00:00Z'],
    ['year 0 once in UTC', '0001-01-01T00:00:00+01:00'],
    ['year 10000 once in UTC', '9999-12-31T23:59:59-23:59'],
    ['a week date', '2009-W53-7'],
    ['an ordinal date', '2009-123'],
    ['the basic format', '20261122T101500Z'],
    ['no offset', '2026-11-22T10:15:00'],
    ['a fraction without seconds', '2026-11-22T10:15.5Z'],
    ['no minutes', '2026-11-22T10Z'],
    ['an expanded year', '+010000-01-01T00:00:00Z'],
    ['a trailing newline', '2026-11-22T10:15:00Z\n'],
    ['a number', 1795342500000],
  ])('refuses %s', (_, value) => {
    expect(isTimestamp(value)).toBe(false);
  });
});

describe(isStorableText.name, () => {
  it('takes any well-formed text, astral characters included', () => {
    expect(isStorableText('')).toBe(true);
    expect(isStorableText('naïve 😀 \t\n')).toBe(true);
  });

  it('refuses NUL and unpaired surrogates', () => {
    expect(isStorableText('a\u0000b')).toBe(false);
    expect(isStorableText('\ud800')).toBe(false);
    expect(isStorableText('x\udc00y')).toBe(false);
    expect(isStorableText('\ude00\ud83d')).toBe(false);
    expect(isStorableText(42)).toBe(false);
  });
});

describe('UUID', () => {
  it('takes RFC 9562 UUIDs of any version and case, and the nil and max UUIDs', () => {
    for (const value of [
      '0b6f3c5e-8a7d-4c1b-9d2f-4e5a6b7c8d9e',
      '0B6F3C5E-8A7D-7C1B-AD2F-4E5A6B7C8D9E',
      '00000000-0000-0000-0000-000000000000',
      'ffffffff-ffff-ffff-ffff-ffffffffffff',
    ]) {
      expect(UUID.test(value)).toBe(true);
    }
  });

  it('refuses a urn: prefix, braces and a missing dash', () => {
    for (const value of [
      'urn:uuid:0b6f3c5e-8a7d-4c1b-9d2f-4e5a6b7c8d9e',
      '{0b6f3c5e-8a7d-4c1b-9d2f-4e5a6b7c8d9e}',
      '0b6f3c5e8a7d-4c1b-9d2f-4e5a6b7c8d9e',
    ]) {
      expect(UUID.test(value)).toBe(false);
    }
  });
});

describe(MaxChars.name, () => {
  class Named {
    @MaxChars(3)
    name: unknown;
  }
  const errors = (name: unknown) => validateSync(Object.assign(new Named(), { name })).map((e) => Object.values(e.constraints ?? {}));

  it('counts code points, as varchar(n) does', () => {
    expect(errors('abc')).toEqual([]);
    expect(errors('😀😀😀')).toEqual([]);
    expect(errors('a\uFE0Fb\uFE0F')).toEqual([['name must be shorter than or equal to 3 characters']]);
    expect(errors('abcd')).toHaveLength(1);
    expect(errors(7)).toHaveLength(1);
  });
});
