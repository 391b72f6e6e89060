import type { RunCounts } from './result-input.js';

/** Domain events of results/: the live-update gateway relays them to subscribers of the project. */
export const RESULTS_EVENT = 'results.event';

export interface ResultsEvent {
  projectId: string;
  event: 'run.created' | 'run.finished' | 'results.added' | 'import.completed';
  runId: string;
  data: Record<string, unknown> & { counts?: RunCounts };
}
