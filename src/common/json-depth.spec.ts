import { MAX_JSON_DEPTH, nestsDeeperThan } from './json-depth.js';

/** `depth` levels: objects and arrays alternating, innermost empty. */
function nested(depth: number): unknown {
  let value: unknown = depth % 2 ? {} : [];
  for (let i = 1; i < depth; i++) {
    value = i % 2 ? [value] : { a: value };
  }
  return value;
}

describe('nestsDeeperThan', () => {
  it('counts the top level as one', () => {
    expect(nestsDeeperThan({}, 1)).toBe(false);
    expect(nestsDeeperThan({ a: {} }, 1)).toBe(true);
    expect(nestsDeeperThan([[1, 'x', null]], 2)).toBe(false);
  });

  it.each([1, 2, 31, 32])('takes %i levels within the limit', (depth) => {
    expect(nestsDeeperThan(nested(depth), MAX_JSON_DEPTH)).toBe(false);
  });

  it.each([33, 5_000, 200_000])('refuses %i levels without overflowing the stack', (depth) => {
    expect(nestsDeeperThan(nested(depth), MAX_JSON_DEPTH)).toBe(true);
  });

  it('finds a deep branch after shallow ones, in arrays and objects', () => {
    expect(nestsDeeperThan({ a: 1, b: [1, 2, { c: nested(40) }] }, MAX_JSON_DEPTH)).toBe(true);
    expect(nestsDeeperThan([1, 'two', { three: [3] }], MAX_JSON_DEPTH)).toBe(false);
  });

  it('leaves scalars alone', () => {
    expect(nestsDeeperThan('x', 0)).toBe(false);
    expect(nestsDeeperThan(null, 0)).toBe(false);
  });
});
