import { idArray } from './id-array.js';

describe(idArray.name, () => {
  it('writes ids as the text of a bigint[], none as the empty array', () => {
    expect(idArray(['1', '20', '300'])).toBe('{1,20,300}');
    expect(idArray([])).toBe('{}');
  });
});
