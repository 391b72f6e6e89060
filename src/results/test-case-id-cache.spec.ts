import { TestCaseIdCache } from './test-case-id-cache.js';

describe(TestCaseIdCache.name, () => {
  it('finds an id by project, suite and name, and by nothing less', () => {
    const cache = new TestCaseIdCache(10);
    cache.set('1', 'Suite', 'adds', '100');
    cache.set('1', '', 'adds', '101');
    expect(cache.get('1', 'Suite', 'adds')).toBe('100');
    expect(cache.get('1', '', 'adds')).toBe('101');
    expect(cache.get('2', 'Suite', 'adds')).toBeUndefined();
    expect(cache.get('1', 'Suite', 'subtracts')).toBeUndefined();
    expect(cache.get('1', 'Other', 'adds')).toBeUndefined();
  });

  it('keeps two generations: a full young one ages, and an old id read again is young once more', () => {
    const cache = new TestCaseIdCache(2);
    cache.set('1', 'S', 'a', '1');
    cache.set('1', 'S', 'b', '2');
    cache.set('1', 'S', 'b', '2'); // the same test again does not fill the generation
    cache.set('1', 'S', 'c', '3'); // young {a, b} ages; young {c}
    expect(cache.get('1', 'S', 'a')).toBe('1'); // from the old generation, now young {c, a}
    cache.set('1', 'S', 'd', '4'); // young {c, a} ages; {a, b} is dropped; young {d}
    expect(cache.get('1', 'S', 'b')).toBeUndefined();
    expect(cache.get('1', 'S', 'a')).toBe('1');
    expect(cache.get('1', 'S', 'c')).toBe('3');
    expect(cache.get('1', 'S', 'd')).toBe('4');
  });

  it("forgets a project's ids when its count of test case deletions changed, and only that project's", () => {
    const cache = new TestCaseIdCache(10);
    cache.pruned('1', '0');
    cache.set('1', 'S', 'a', '1');
    cache.set('2', 'S', 'a', '2');
    cache.pruned('1', '0'); // unchanged: kept
    expect(cache.get('1', 'S', 'a')).toBe('1');
    cache.pruned('1', '1'); // retention deleted some of project 1's test cases
    expect(cache.get('1', 'S', 'a')).toBeUndefined();
    expect(cache.get('2', 'S', 'a')).toBe('2');
    cache.set('1', 'S', 'a', '3');
    cache.pruned('1', '1');
    expect(cache.get('1', 'S', 'a')).toBe('3');
  });
});
