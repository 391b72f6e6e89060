import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

let collect: (() => void) | undefined;

/** V8's full collection (gc(), exposed at run time: the flag is read when a context is created). */
function fullCollection(): () => void {
  if (!collect) {
    setFlagsFromString('--expose-gc');
    collect = runInNewContext('gc') as () => void;
  }
  return collect;
}

/**
 * Keeps a long streaming job's heap near what it holds alive. V8 lets the old generation grow to a multiple of
 * what survived the last full collection before it collects again; a report import of hundreds of megabytes
 * promotes enough short-lived garbage (request chunks, batches caught by a young collection) to reach that
 * multiple, and the process keeps the pages. `step()` at each unit of work asks for a full collection once the
 * heap has grown `growthBytes` past what the last one left, at most every `everySteps` steps.
 */
export class HeapTrim {
  private steps = 0;
  private baseline: number;

  constructor(
    private readonly growthBytes = 64 * 1024 * 1024,
    private readonly everySteps = 20,
    /** The heap as V8 reports it, and its full collection (a test gives its own). */
    private readonly heap: Heap = V8_HEAP,
  ) {
    this.baseline = heap.used();
  }

  step(): void {
    if (++this.steps % this.everySteps !== 0) {
      return;
    }
    if (this.heap.used() - this.baseline > this.growthBytes) {
      this.heap.collect();
      this.baseline = this.heap.used();
    }
  }
}

/** What HeapTrim reads and asks of the heap. */
export interface Heap {
  used(): number;
  collect(): void;
}

const V8_HEAP: Heap = {
  used: () => getHeapStatistics().used_heap_size,
  collect: () => fullCollection()(),
};
