import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';

export const RESULT_STATUSES = ['PASSED', 'FAILED', 'BROKEN', 'SKIPPED'] as const;
export type ResultStatus = (typeof RESULT_STATUSES)[number];
export type RunStatus = 'IN_PROGRESS' | 'FINISHED';

@Entity('runs')
export class RunEntity {
  @PrimaryGeneratedColumn('identity', { type: 'bigint', generatedIdentity: 'ALWAYS' })
  id: string;

  @Column({ name: 'project_id', type: 'bigint' })
  projectId: string;

  @Column({ type: 'uuid', nullable: true })
  uuid: string | null;

  @Column({ type: 'varchar', length: 500 })
  name: string;

  @Column({ type: 'varchar', length: 16, default: 'IN_PROGRESS' })
  status: RunStatus;

  @Column({ name: 'started_at', type: 'timestamptz' })
  startedAt: Date;

  @Column({ name: 'finished_at', type: 'timestamptz', nullable: true })
  finishedAt: Date | null;

  @Column({ type: 'jsonb', default: () => "'{}'::jsonb" })
  attributes: Record<string, string>;

  /** The runs it is compared with (API.md, "Streams"); src/common/streams.ts. */
  @Column({ type: 'varchar', length: 200 })
  stream: string;

  @Column({ name: 'count_total', type: 'integer', default: 0 })
  countTotal: number;

  @Column({ name: 'count_passed', type: 'integer', default: 0 })
  countPassed: number;

  @Column({ name: 'count_failed', type: 'integer', default: 0 })
  countFailed: number;

  @Column({ name: 'count_broken', type: 'integer', default: 0 })
  countBroken: number;

  @Column({ name: 'count_skipped', type: 'integer', default: 0 })
  countSkipped: number;

  /** Outcomes PASSED after an earlier FAILED or BROKEN attempt. */
  @Column({ name: 'count_passed_on_retry', type: 'integer', default: 0 })
  countPassedOnRetry: number;

  /** Every result stored (the counts above are of outcomes: one a test). */
  @Column({ name: 'count_attempts', type: 'integer', default: 0 })
  countAttempts: number;

  /**
   * Tests NEW_FAILURE against the run before in its stream, stored as the run finishes (src/insights/changes.ts);
   * null while it runs, when it had no run before, and for runs finished before the column existed.
   */
  @Column({ name: 'count_new_failures', type: 'integer', nullable: true })
  countNewFailures: number | null;

  /**
   * The quality gate's verdict once the finished run was evaluated (src/gates/): PASSED, FAILED or OFF; null while
   * it runs and until then (the run shape's gate PENDING). Its conditions are read by the gate's own endpoint.
   */
  @Column({ name: 'gate_status', type: 'varchar', length: 8, nullable: true })
  gateStatus: 'PASSED' | 'FAILED' | 'OFF' | null;

  /** A pinned run is kept by the retention cleanup whatever its age (API.md, "Retention"). */
  @Column({ type: 'boolean', default: false })
  pinned: boolean;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}

@Entity('test_cases')
export class TestCaseEntity {
  @PrimaryGeneratedColumn('identity', { type: 'bigint', generatedIdentity: 'ALWAYS' })
  id: string;

  @Column({ name: 'project_id', type: 'bigint' })
  projectId: string;

  /** MD5 of the explicit test id, or of suite + name, as a UUID: the stable identity across runs and surfaces. */
  @Column({ type: 'uuid' })
  identity: string;

  @Column({ name: 'external_id', type: 'varchar', length: 500, nullable: true })
  externalId: string | null;

  @Column({ type: 'varchar', length: 1000, default: '' })
  suite: string;

  @Column({ type: 'varchar', length: 1000 })
  name: string;

  @Column({ type: 'boolean', default: false })
  flaky: boolean;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}

@Entity('results')
export class ResultEntity {
  @PrimaryGeneratedColumn('identity', { type: 'bigint', generatedIdentity: 'ALWAYS' })
  id: string;

  @Column({ name: 'run_id', type: 'bigint' })
  runId: string;

  @Column({ name: 'project_id', type: 'bigint' })
  projectId: string;

  @Column({ name: 'test_id', type: 'bigint' })
  testId: string;

  @Column({ type: 'uuid', nullable: true })
  uuid: string | null;

  @Column({ type: 'varchar', length: 1000 })
  name: string;

  @Column({ type: 'varchar', length: 1000, default: '' })
  suite: string;

  @Column({ type: 'varchar', length: 16 })
  status: ResultStatus;

  @Column({ name: 'duration_ms', type: 'bigint', nullable: true })
  durationMs: string | null;

  @Column({ type: 'text', nullable: true })
  message: string | null;

  @Column({ type: 'text', nullable: true })
  trace: string | null;

  @Column({ name: 'started_at', type: 'timestamptz', nullable: true })
  startedAt: Date | null;

  @Column({ type: 'jsonb', default: () => "'{}'::jsonb" })
  attributes: Record<string, string>;

  @Column({ type: 'integer', default: 0 })
  retry: number;

  /** Whether this result is its test's outcome in the run: its last attempt (see attempts.ts). */
  @Column({ type: 'boolean', default: true })
  outcome: boolean;

  /** On an outcome: how many attempts the test had in the run. */
  @Column({ type: 'integer', default: 1 })
  attempts: number;

  /** On an outcome: the statuses of the test's other attempts in the run, as bits (attempts.ts, STATUS_BITS). */
  @Column({ name: 'other_statuses', type: 'smallint', default: 0 })
  otherStatuses: number;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}
