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
  startedAt?: Date;
  attributes?: Record<string, string>;
  retry?: number;
}

export interface RunCounts {
  total: number;
  passed: number;
  failed: number;
  broken: number;
  skipped: number;
}
