import type { ResultStatus } from './entities.js';

/** One result as every ingest surface hands it to the writer, already validated. */
export interface ResultInput {
  uuid?: string;
  testId?: string;
  name: string;
  suite?: string;
  status: ResultStatus;
  durationMs?: number;
  message?: string;
  trace?: string;
  /** A validated timestamp (ISO 8601 with an offset, or a date: UTC midnight); the writer stores it in UTC. */
  startedAt?: string;
  attributes?: Record<string, string>;
  retry?: number;
}

/** Results by status. */
export interface StatusCounts {
  total: number;
  passed: number;
  failed: number;
  broken: number;
  skipped: number;
}

/**
 * A run's counts: of its tests' outcomes (the last attempt of each test, see attempts.ts), `passedOnRetry` the
 * passed ones with an earlier FAILED or BROKEN attempt, and `attempts` every result stored.
 */
export interface RunCounts extends StatusCounts {
  passedOnRetry: number;
  attempts: number;
}
