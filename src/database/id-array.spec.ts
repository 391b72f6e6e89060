import { createRequire } from 'node:module';
import { idArray, textArray } from './id-array.js';

/** node-postgres's own writing of a parameter (not in its typings). */
const { prepareValue } = createRequire(import.meta.url)('pg/lib/utils.js') as {
  prepareValue: (value: unknown) => unknown;
};

describe(idArray.name, () => {
  it('writes ids as the text of a bigint[], none as the empty array', () => {
    expect(idArray(['1', '20', '300'])).toBe('{1,20,300}');
    expect(idArray([])).toBe('{}');
  });
});

describe(textArray.name, () => {
  it('writes what node-postgres writes for the same array', () => {
    const values = [
      'plain',
      '',
      'NULL',
      null,
      undefined,
      'a "quoted" one',
      'back\\slash',
      'both \\"',
      '{x,y}',
      'tab\there',
      'é ✓ 💥',
    ];
    expect(textArray(values)).toBe(prepareValue(values));
    expect(textArray([])).toBe(prepareValue([]));
  });
});
