import { setTimeout as delay } from 'node:timers/promises';
import { getHeapStatistics } from 'node:v8';
import { type Heap, HeapTrim } from './heap-trim.js';

const MB = 1024 * 1024;

/** A heap whose size the test sets, counting the full collections asked for (each leaves `live`). */
function fakeHeap(start: number): Heap & { size: number; live: number; collections: number } {
  const heap = {
    size: start,
    live: start,
    collections: 0,
    used: () => heap.size,
    collect: () => {
      heap.collections++;
      heap.size = heap.live;
    },
  };
  return heap;
}

describe(HeapTrim.name, () => {
  it('asks for a full collection once the heap has grown past the threshold, then measures from there', () => {
    const heap = fakeHeap(100 * MB);
    const trim = new HeapTrim(8 * MB, 1, heap);
    heap.size = 107 * MB;
    trim.step();
    expect(heap.collections).toBe(0);
    heap.size = 109 * MB;
    heap.live = 103 * MB;
    trim.step();
    expect([heap.collections, heap.size]).toEqual([1, 103 * MB]);
    // From what the collection left: 8 MB more than 103 MB, not than 100 MB.
    heap.size = 110 * MB;
    trim.step();
    expect(heap.collections).toBe(1);
    heap.size = 112 * MB;
    trim.step();
    expect(heap.collections).toBe(2);
  });

  it('looks at the heap only every `everySteps` steps', () => {
    const heap = fakeHeap(0);
    const trim = new HeapTrim(MB, 5, heap);
    heap.size = 10 * MB;
    for (let i = 0; i < 4; i++) {
      trim.step();
    }
    expect(heap.collections).toBe(0);
    trim.step();
    expect(heap.collections).toBe(1);
  });

  it("collects V8's heap for real by default", async () => {
    // Garbage that young collections promote (alive across them), let go right before the step: nothing allocates
    // in between, so the step finds it in the heap and its collection frees it.
    // First a full collection (a trim without threshold, after some growth), so that no collection of what this
    // worker's earlier tests left runs in the middle of this one and moves the baseline.
    const settle = new HeapTrim(0, 1);
    let garbage: { i: number; s: string }[][] = [];
    garbage.push(Array.from({ length: 1000 }, (_, i) => ({ i, s: `${i}` })));
    settle.step();
    garbage.length = 0;
    const trim = new HeapTrim(8 * MB, 1);
    for (let k = 0; k < 40; k++) {
      garbage.push(Array.from({ length: 10_000 }, (_, i) => ({ i, s: `item ${k}-${i}` })));
    }
    const before = getHeapStatistics().used_heap_size;
    garbage = [];
    trim.step();
    expect(garbage).toEqual([]);
    // The collection's pages are swept by V8's helper threads, which a busy machine may hold up: the heap's size
    // counts them until then. Nothing allocates enough meanwhile to start a collection of its own.
    const freed = () => getHeapStatistics().used_heap_size < before - 8 * MB;
    for (let waited = 0; !freed() && waited < 2000; waited += 20) {
      await delay(20);
    }
    expect(getHeapStatistics().used_heap_size).toBeLessThan(before - 8 * MB);
  });
});
