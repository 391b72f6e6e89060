import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { EventEmitter2 } from '@nestjs/event-emitter';
import { AUDIT_EVENT, type AuditRecord } from '../audit/audit.events.js';
import { PeriodicSweep } from '../common/periodic-sweep.js';
import { STABILITY_EVENT, type StabilityEvent } from './stability.events.js';
import { TestHealthRepository } from './test-health.repository.js';

const SWEEP_MS = 30_000;
const SWEEP_LIMIT = 500;

/**
 * Ends quarantines whose `until` has passed, durably: every read already treats them as ended at once; this clears
 * the row (so the state column and its index agree again), audits TEST_RELEASED and tells the project's live
 * subscribers. Every replica sweeps; rows one of them holds are skipped by the others (SKIP LOCKED).
 */
@Injectable()
export class QuarantineSweeper implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(QuarantineSweeper.name);
  private readonly periodic = new PeriodicSweep(
    () => this.sweepAll(),
    (error) => this.logger.warn(`Quarantine sweep failed: ${String(error)}`),
  );

  constructor(
    private readonly health: TestHealthRepository,
    private readonly events: EventEmitter2,
  ) {}

  onApplicationBootstrap(): void {
    this.periodic.start(SWEEP_MS);
  }

  onApplicationShutdown(): Promise<void> {
    return this.periodic.stop();
  }

  /** One sweep (until nothing is due): how many quarantines it ended. */
  sweep(): Promise<number> {
    return this.periodic.run();
  }

  private async sweepAll(): Promise<number> {
    let total = 0;
    for (;;) {
      const ended = await this.health.endExpired(SWEEP_LIMIT);
      for (const { testId, projectId, auto } of ended) {
        this.events.emit(STABILITY_EVENT, {
          projectId,
          event: 'test.released',
          testId,
        } satisfies StabilityEvent);
        this.events.emit(AUDIT_EVENT, {
          type: 'TEST_RELEASED',
          actorId: null,
          target: `project:${projectId}`,
          details: { testId: Number(testId), auto, why: 'until passed' },
        } satisfies AuditRecord);
      }
      total += ended.length;
      if (ended.length < SWEEP_LIMIT) {
        return total;
      }
    }
  }
}
