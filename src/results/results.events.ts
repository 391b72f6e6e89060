import type { RunCounts } from './result-input.js';

/** Domain events of results/: the live-update gateway relays them to subscribers of the project. */
export const RESULTS_EVENT = 'results.event';

export interface ResultsEvent {
  projectId: string;
  event: 'run.created' | 'run.finished' | 'results.added' | 'import.completed' | 'run.gate';
  runId: string;
  data: Record<string, unknown> & { counts?: RunCounts };
}

/**
 * A run's outcomes became final, committed: it finished (V1 finish, V2 finish message, an import), or a finished
 * run took results (V2 results processed after their run's finish). What derives from a finished run (the quality
 * gate, src/gates/) listens; every surface awaits its listeners (`emitAsync`) after the commit and before it answers
 * and announces run.finished, so that the run it shows carries its gate. A listener never throws.
 */
export const RUN_FINISHED_EVENT = 'results.run-finished';

export interface RunFinishedEvent {
  projectId: string;
  runId: string;
}
