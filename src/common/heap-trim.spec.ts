import { getHeapStatistics } from 'node:v8';
import { HeapTrim } from './heap-trim.js';

describe(HeapTrim.name, () => {
  it('asks for a full collection once the heap has grown past the threshold, then measures from there', () => {
    const trim = new HeapTrim(8 * 1024 * 1024, 1);
    // Garbage that young collections promote (it is alive across them), then let go.
    let garbage: { i: number; s: string }[][] = [];
    for (let k = 0; k < 40; k++) {
      garbage.push(Array.from({ length: 10_000 }, (_, i) => ({ i, s: `item ${k}-${i}` })));
    }
    garbage = [];
    const before = getHeapStatistics().used_heap_size;
    trim.step();
    const after = getHeapStatistics().used_heap_size;
    expect(garbage).toEqual([]);
    expect(after).toBeLessThan(before - 8 * 1024 * 1024);
  });
});
