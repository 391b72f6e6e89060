import { describe, expect, it } from 'vitest';
import type { Page, Run } from '../src/api/client';
import { type LiveEvent, mergeRunEvent } from '../src/live/merge';

const counts = (total: number, failed = 0) => ({
  total,
  passed: total - failed,
  failed,
  broken: 0,
  skipped: 0,
  passedOnRetry: 0,
  attempts: total,
});
const run = (id: number, total = 0): Run => ({
  id,
  projectId: 1,
  uuid: null,
  name: `run ${id}`,
  status: 'IN_PROGRESS',
  startedAt: '2026-11-25T10:00:00.000Z',
  finishedAt: null,
  attributes: {},
  stream: 'nightly',
  counts: counts(total),
  newFailures: null,
  gate: { status: 'PENDING' },
  pinned: false,
});
const pageOf = (runs: Run[], page = 0, size = 3, totalElements = runs.length): Page<Run> => ({
  content: runs,
  page,
  size,
  totalElements,
  totalPages: Math.ceil(totalElements / size),
});
const event = (name: LiveEvent['event'], data: LiveEvent['data']): LiveEvent => ({
  type: 'event',
  projectId: 1,
  event: name,
  data,
  at: '',
});

describe('mergeRunEvent (the runs page, live)', () => {
  it('puts a new run at the top of the first page, keeping the page size', () => {
    const merged = mergeRunEvent(
      pageOf([run(3), run(2), run(1)]),
      event('run.created', { runId: 4, run: run(4) }),
    );
    expect(merged.content.map((r) => r.id)).toEqual([4, 3, 2]);
    expect([merged.totalElements, merged.totalPages]).toEqual([4, 2]);
  });

  it('counts a new run on a later page without showing it there', () => {
    const later = pageOf([run(1)], 1, 3, 4);
    const merged = mergeRunEvent(later, event('run.created', { runId: 9, run: run(9) }));
    expect(merged.content.map((r) => r.id)).toEqual([1]);
    expect(merged.totalElements).toBe(5);
  });

  it('updates the counts of a shown run when results are added, and the run when it finishes', () => {
    const shown = pageOf([run(2), run(1)]);
    const added = mergeRunEvent(shown, event('results.added', { runId: 1, counts: counts(10, 2) }));
    expect(added.content[1].counts).toEqual(counts(10, 2));
    const finished = mergeRunEvent(
      added,
      event('run.finished', { runId: 1, run: { ...run(1, 10), status: 'FINISHED' } }),
    );
    expect(finished.content[1].status).toBe('FINISHED');
  });

  it("takes a gate evaluated (again) into the shown run's status", () => {
    const shown = pageOf([run(2), { ...run(1), status: 'FINISHED', gate: { status: 'FAILED' } }]);
    const gate = {
      status: 'PASSED' as const,
      evaluatedAt: '',
      conditions: [],
      ignored: { quarantined: 0, knownIssues: 0 },
    };
    expect(mergeRunEvent(shown, event('run.gate', { runId: 1, gate })).content[1].gate).toEqual({
      status: 'PASSED',
    });
    expect(mergeRunEvent(shown, event('run.gate', { runId: 9, gate }))).toBe(shown);
  });

  it('leaves the page as it is for a run it does not show, and for a run already there', () => {
    const shown = pageOf([run(2)]);
    expect(mergeRunEvent(shown, event('results.added', { runId: 7, counts: counts(1) }))).toBe(shown);
    expect(mergeRunEvent(shown, event('run.created', { runId: 2, run: run(2) })).content).toHaveLength(1);
  });
});

describe('flips (how flaky a test is)', () => {
  it('counts the changes between passing and failing, skipping skips', async () => {
    const { flips } = await import('../src/pages/projects/flips');
    const item = (status: string) => ({ status }) as never;
    expect(flips([item('PASSED'), item('PASSED')])).toBe(0);
    expect(flips([item('PASSED'), item('FAILED'), item('SKIPPED'), item('PASSED')])).toBe(2);
    expect(flips([item('FAILED'), item('BROKEN')])).toBe(0);
  });
});
