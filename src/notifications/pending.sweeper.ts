import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { PeriodicSweep } from '../common/periodic-sweep.js';
import { AppConfig } from '../config/app-config.js';
import { NotificationOutbox } from './notification-outbox.js';
import { PendingRepository } from './pending.repository.js';

/** Owed events listed per round of a sweep. */
const SWEEP_LIMIT = 100;

/**
 * Announces the events changes owe that their own replica did not (issue #39: it died between the change's commit
 * and the announcement, or the database failed the announcement): those older than SVC_NOTIFY_GRACE, at start and
 * every SVC_NOTIFY_GRACE after. Every replica sweeps; an event one of them (or its own replica, late) holds is
 * skipped by the others (SKIP LOCKED), and one announced is gone from the table, so each is announced once.
 */
@Injectable()
export class PendingSweeper implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('Notifications');
  private readonly periodic = new PeriodicSweep(
    () => this.sweepAll(),
    (error) => this.logger.warn(`The sweep of owed notifications failed: ${String(error)}`),
  );

  constructor(
    private readonly pending: PendingRepository,
    private readonly outbox: NotificationOutbox,
    private readonly config: AppConfig,
  ) {}

  onApplicationBootstrap(): void {
    this.periodic.start(this.config.notify.graceMs, true);
  }

  onApplicationShutdown(): Promise<void> {
    return this.periodic.stop();
  }

  /** One sweep (until nothing past the grace period is left that another transaction does not hold): how many it announced. */
  sweep(): Promise<number> {
    return this.periodic.run();
  }

  private async sweepAll(): Promise<number> {
    let announced = 0;
    // Those that failed in this sweep (logged by announce) wait for the next one.
    const failed: string[] = [];
    while (!this.periodic.stopped) {
      const due = await this.pending.due(this.config.notify.graceMs, SWEEP_LIMIT, failed);
      for (const id of due) {
        const n = await this.outbox.announce({ id }, 'sweep');
        if (n === null) {
          failed.push(id);
        } else {
          announced += n;
        }
      }
      if (due.length < SWEEP_LIMIT) {
        break;
      }
    }
    if (announced) {
      this.logger.warn(
        `Announced ${announced} owed notification(s) their own replica had not (see SVC_NOTIFY_GRACE)`,
      );
    }
    return announced;
  }
}
