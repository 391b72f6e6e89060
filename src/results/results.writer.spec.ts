import type { ResultInput } from './result-input.js';
import { numberBlocks, stripFormatCharactersOf } from './results.writer.js';

describe(numberBlocks.name, () => {
  it('numbers each block from its start, the last one only as far as needed', () => {
    expect(numberBlocks(['1001', '5001'], 3, 5)).toEqual(['1001', '1002', '1003', '5001', '5002']);
    expect(numberBlocks(['7'], 1000, 2)).toEqual(['7', '8']);
  });

  it('takes one id a block from a sequence that rises by one', () => {
    expect(numberBlocks(['4', '5', '9'], 1, 3)).toEqual(['4', '5', '9']);
  });

  it('counts exactly past 2^53, where a double would not', () => {
    expect(numberBlocks(['9007199254740991'], 1000, 3)).toEqual([
      '9007199254740991',
      '9007199254740992',
      '9007199254740993',
    ]);
  });

  it('refuses a sequence that does not rise, and too few blocks', () => {
    expect(() => numberBlocks(['1'], 0, 1)).toThrow('must rise');
    expect(() => numberBlocks(['1'], -1000, 1)).toThrow('must rise');
    expect(() => numberBlocks(['1'], 1000, 1001)).toThrow('Expected 1001 ids');
  });
});

describe(stripFormatCharactersOf.name, () => {
  it('strips invisible format characters from names, suites and attribute names in place, and counts the results', () => {
    const items: ResultInput[] = [
      {
        name: 'logs in\u202Egnp.exe',
        suite: 'Login\u200BTest',
        status: 'PASSED',
        attributes: { 'own\u2066er': 'x', owner: 'y' },
      },
      {
        name: 'plain',
        suite: 'Suite',
        status: 'FAILED',
        message: 'message\u202E kept',
        attributes: { tag: 'v\u202E' },
      },
      { name: '\u200B\u200B', status: 'BROKEN' },
    ];
    expect(stripFormatCharactersOf(items)).toBe(2);
    expect(items[0]).toEqual({
      name: 'logs ingnp.exe',
      suite: 'LoginTest',
      status: 'PASSED',
      // Two names that become one: the first one's value stays.
      attributes: Object.assign(Object.create(null), { owner: 'x' }),
    });
    // Messages and attribute values are text, not names: left as they are.
    expect(items[1].message).toBe('message\u202E kept');
    expect(items[1].attributes).toEqual({ tag: 'v\u202E' });
    expect(items[2].name).toBe('(unnamed)');
  });
});
