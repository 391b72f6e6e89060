import type { Page, Run, RunCounts, RunGate } from '../api/client';

/** An event of GET /ws (API.md, Live updates). */
export interface LiveEvent {
  type: 'event';
  projectId: number;
  event: 'run.created' | 'run.finished' | 'results.added' | 'import.completed' | 'run.gate';
  data: { runId: number; run?: Run; counts?: RunCounts; gate?: RunGate };
  at: string;
}

/**
 * A page of runs (newest first) with one live event applied: a run created joins the top of the first page, a
 * run finished, a batch of results or a gate evaluated updates the run where it is shown. Returns the same page when the event
 * changes nothing shown (an event for a run on another page).
 */
export function mergeRunEvent(page: Page<Run>, event: LiveEvent): Page<Run> {
  const index = page.content.findIndex((r) => r.id === event.data.runId);
  if (event.event === 'run.created' && event.data.run) {
    if (index >= 0 || page.page !== 0) {
      return index >= 0
        ? replaceAt(page, index, event.data.run)
        : { ...page, totalElements: page.totalElements + 1 };
    }
    const content = [event.data.run, ...page.content].slice(0, page.size);
    const totalElements = page.totalElements + 1;
    return { ...page, content, totalElements, totalPages: Math.max(1, Math.ceil(totalElements / page.size)) };
  }
  if (index < 0) {
    return page;
  }
  if (event.event === 'run.finished' && event.data.run) {
    return replaceAt(page, index, event.data.run);
  }
  if (event.event === 'results.added' && event.data.counts) {
    return replaceAt(page, index, { ...page.content[index], counts: event.data.counts });
  }
  if (event.event === 'run.gate' && event.data.gate) {
    return replaceAt(page, index, { ...page.content[index], gate: { status: event.data.gate.status } });
  }
  return page;
}

function replaceAt(page: Page<Run>, index: number, run: Run): Page<Run> {
  const content = page.content.slice();
  content[index] = run;
  return { ...page, content };
}
