/**
 * Emitted (EventEmitter2) when a run or a project was deleted: its rows are hidden already, and the purge
 * (src/retention/) should start on its results now rather than at its next poll.
 */
export const PURGE_REQUESTED = 'retention.purge-requested';
