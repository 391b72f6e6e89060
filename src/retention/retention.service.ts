import { Injectable, Logger } from '@nestjs/common';
import { EventEmitter2 } from '@nestjs/event-emitter';
import { InjectDataSource } from '@nestjs/typeorm';
import { setTimeout as sleep } from 'node:timers/promises';
import type { DataSource, QueryRunner } from 'typeorm';
import { AUDIT_EVENT, type AuditRecord } from '../audit/audit.events.js';
import { AppConfig } from '../config/app-config.js';
import { Metrics } from '../health/metrics.js';
import { ResultsObservers } from '../results/results-observers.js';
import { type Keep, RetentionRepository } from './retention.repository.js';

/** Session advisory lock: one replica at a time runs the cleanup and the purge (any fixed 64-bit number). */
export const RETENTION_LOCK = 7_412_580_611_335_021n;

/** Runs deleted per statement (each a row; their results are queued, not deleted, by it). */
const RUNS_PER_STATEMENT = 500;

/** The pause after a batch that took `batchMs` (see RetentionService `pause`), in milliseconds. */
export function pauseAfter(
  batchMs: number,
  { pauseMs, pausePercent }: { pauseMs: number; pausePercent: number },
): number {
  return Math.max(pauseMs, (batchMs * pausePercent) / 100);
}

export interface PassOutcome {
  runsDeleted: number;
  resultsDeleted: number;
}

/**
 * Retention (API.md, "Retention") and the purge behind every delete of runs and projects. Removing a run is two
 * steps: its row goes at once (one short statement, so the run is gone from every read; its delete trigger queues it
 * in run_purges), then its results go in bounded batches (SVC_RETENTION_BATCH a transaction, a pause after each: see
 * `pause`), each batch telling the results observers which test cases lost results so their derived state is
 * recounted in the same transaction. Test cases left without results go after that. A deleted project is hidden at
 * once (projects.deleting_at) and removed the same way: its runs, their results, its test cases, its row. Work that
 * a replica's crash interrupted is in the tables (run_purges, deleting_at) and resumes at the next poll of any replica.
 */
@Injectable()
export class RetentionService {
  private readonly logger = new Logger(RetentionService.name);
  /** Set at shutdown: the work stops after the batch in flight (what is left stays queued for the next start). */
  private stopping = false;

  constructor(
    private readonly repo: RetentionRepository,
    private readonly observers: ResultsObservers,
    private readonly metrics: Metrics,
    private readonly config: AppConfig,
    private readonly events: EventEmitter2,
    @InjectDataSource() private readonly db: DataSource,
  ) {}

  /**
   * Runs `work` holding the retention lock. `wait`: until it is free (a request for a pass now); else not at all when
   * another replica holds it (null). The lock lives on a connection of its own, released with it: a replica killed
   * mid-work lets go of it with its connection.
   */
  async withLock<T>(wait: boolean, work: () => Promise<T>): Promise<T | null> {
    const runner: QueryRunner = this.db.createQueryRunner();
    await runner.connect();
    try {
      for (;;) {
        const [{ locked }]: { locked: boolean }[] = await runner.query(
          'SELECT pg_try_advisory_lock($1) AS locked',
          [RETENTION_LOCK.toString()],
        );
        if (locked) {
          break;
        }
        if (!wait) {
          return null;
        }
        await sleep(200);
      }
      try {
        return await work();
      } finally {
        await runner
          .query('SELECT pg_advisory_unlock($1)', [RETENTION_LOCK.toString()])
          .catch(() => undefined);
      }
    } finally {
      await runner.release();
    }
  }

  /** Stops the work at the next batch's end (the replica is shutting down). */
  stop(): void {
    this.stopping = true;
  }

  /**
   * The scheduled cleanup: every project with a policy, one after the other, then whatever else is queued, and the
   * V2 messages that waited for a run longer than SVC_V2_PENDING_TTL.
   */
  async cleanupAll(): Promise<void> {
    for (const { id, keep } of await this.repo.projectsWithPolicy()) {
      if (this.stopping) {
        return;
      }
      try {
        const outcome = await this.pass(id, keep);
        if (outcome.runsDeleted > 0) {
          this.audit(id, outcome, null);
        }
      } catch (error) {
        this.logger.error(`Retention of project ${id} failed: ${(error as Error).message}`);
      }
    }
    await this.purgeAll();
    const { pendingTtlSeconds, batch } = this.config.retention;
    const expired = await this.repo.expirePending(pendingTtlSeconds, batch);
    if (expired > 0) {
      this.logger.warn(
        `Dropped ${expired} V2 messages that waited for their run longer than SVC_V2_PENDING_TTL: no run with their UUID was created`,
      );
    }
  }

  /** One pass for one project now (POST /api/projects/{id}/retention/run), audited whatever it removed. */
  async passNow(projectId: string, actorId: string, ip: string): Promise<PassOutcome> {
    const outcome = await this.withLock(true, async () =>
      this.pass(projectId, await this.repo.policyOf(projectId)),
    );
    this.audit(projectId, outcome!, { actorId, ip });
    return outcome!;
  }

  preview(projectId: string, keep: Keep): Promise<{ runs: number; results: number }> {
    return this.repo.preview(projectId, keep);
  }

  /** Deletes the runs the policy removes, purges their results, then the test cases left without results. */
  private async pass(projectId: string, keep: Keep): Promise<PassOutcome> {
    const doomed = await this.repo.doomedRuns(projectId, keep);
    const outcome: PassOutcome = { runsDeleted: 0, resultsDeleted: 0 };
    for (let i = 0; i < doomed.length; i += RUNS_PER_STATEMENT) {
      const deleted = await this.repo.deleteRuns(doomed.slice(i, i + RUNS_PER_STATEMENT).map((r) => r.id));
      outcome.runsDeleted += deleted.length;
      outcome.resultsDeleted += deleted.reduce((sum, r) => sum + r.results, 0);
    }
    await this.purgeQueued(projectId);
    await this.pruneTestCases(projectId);
    return outcome;
  }

  /**
   * Everything queued: the projects being deleted, then the runs deleted one by one (DELETE /api/runs/{id}, or left
   * by a pass that was interrupted). Loops until nothing is left, as deletes may arrive meanwhile.
   */
  async purgeAll(): Promise<void> {
    while (!this.stopping) {
      const deleting = await this.repo.deletingProjects();
      const queued = new Set((await this.repo.queuedPurges()).map((q) => q.projectId));
      if (!deleting.length && !queued.size) {
        break;
      }
      for (const projectId of deleting) {
        await this.removeProject(projectId);
      }
      for (const projectId of queued) {
        await this.purgeQueued(projectId);
      }
    }
    // Once each: a project whose writers are busy is pruned at a later poll.
    for (const projectId of await this.repo.projectsToPrune()) {
      await this.pruneTestCases(projectId);
    }
    // Test cases of projects deleted by a replica still on the code before TestCasesWithoutProjectForeignKey.
    for (const projectId of await this.repo.projectsGone()) {
      await this.deleteTestCasesOf(projectId);
    }
  }

  /** The results of the project's queued runs, batch by batch; each run leaves the queue with its last batch. */
  private async purgeQueued(projectId: string): Promise<void> {
    const { batch } = this.config.retention;
    for (const queued of await this.repo.queuedPurges(projectId)) {
      while (!this.stopping) {
        const started = performance.now();
        const { deleted, done } = await this.repo.transaction(async (tx) => {
          const { deleted, more, testIds, failedTestIds, failures } = await this.repo.deleteResultsBatch(
            tx,
            queued.runId,
            batch,
          );
          if (queued.projectLive) {
            await this.observers.resultsDeleted(tx, {
              projectId,
              runIds: [queued.runId],
              testIds,
              failedTestIds,
              startedAt: queued.startedAt,
              failures,
            });
          }
          const done = !more;
          if (done) {
            await this.repo.dequeuePurge(tx, queued.runId, projectId);
          }
          return { deleted, done };
        });
        if (deleted) {
          this.metrics.retentionDeleted.inc({ kind: 'results' }, deleted);
        }
        if (done) {
          this.metrics.retentionDeleted.inc({ kind: 'runs' });
          break;
        }
        await this.pause(started);
      }
    }
  }

  /** Test cases of the project left without results; skipped (till the next pass) while a writer of it is busy. */
  private async pruneTestCases(projectId: string): Promise<void> {
    for (;;) {
      const pruned = await this.repo.pruneTestCases(projectId, this.config.retention.batch);
      if (pruned) {
        this.metrics.retentionDeleted.inc({ kind: 'tests' }, pruned);
      }
      if (pruned === null || pruned < this.config.retention.batch) {
        return;
      }
    }
  }

  /** A project being deleted: its runs (queued), their results, its test cases, and its row last. */
  private async removeProject(projectId: string): Promise<void> {
    let runs: number;
    do {
      runs = await this.repo.deleteRunsOfProject(projectId, RUNS_PER_STATEMENT);
    } while (runs === RUNS_PER_STATEMENT);
    await this.purgeQueued(projectId);
    if (this.stopping || (await this.repo.queuedPurges(projectId)).length) {
      // Stopped mid-purge: the rest at the next start (test cases go only once their results have).
      return;
    }
    await this.deleteTestCasesOf(projectId);
    await this.repo.deleteProjectRow(projectId);
    this.logger.log(`Project ${projectId} deleted`);
  }

  /** The test cases of a project being deleted, or gone (see RetentionRepository.projectsGone), batch by batch. */
  private async deleteTestCasesOf(projectId: string): Promise<void> {
    const { batch } = this.config.retention;
    let tests: number;
    do {
      const started = performance.now();
      tests = await this.repo.deleteTestCasesOfProject(projectId, batch);
      if (tests) {
        this.metrics.retentionDeleted.inc({ kind: 'tests' }, tests);
      }
      if (tests === batch) {
        await this.pause(started);
      }
    } while (tests === batch);
  }

  /**
   * The pause after a batch begun at `started` (performance.now()), which lets concurrent writes through: at least
   * SVC_RETENTION_PAUSE_MS, and at least SVC_RETENTION_PAUSE_PERCENT of the batch's own time, so that the purge's
   * share of the database stays bounded when its batches slow down (a busy database), as pt-archiver's
   * `--sleep-coef` and gh-ost's `--nice-ratio` do. A fixed pause of 50 ms was 20 s of the bench's 2,000,000-result
   * cleanup (57 to 67 s in all, V1 beside it at 0.86 of its rate alone); with 10 ms or 10 % of the batch it took 32 s
   * (V1 at 0.76), with 30 % 35 s (V1 at 0.82). 20 % is the default.
   */
  private async pause(started: number): Promise<void> {
    const ms = pauseAfter(performance.now() - started, this.config.retention);
    if (ms > 0) {
      await sleep(ms);
    }
  }

  private audit(projectId: string, outcome: PassOutcome, by: { actorId: string; ip: string } | null): void {
    const record: AuditRecord = {
      type: 'RETENTION_CLEANUP',
      actorId: by?.actorId ?? null,
      ip: by?.ip ?? null,
      target: `project:${projectId}`,
      details: { projectId: Number(projectId), ...outcome },
    };
    this.events.emit(AUDIT_EVENT, record);
  }
}
