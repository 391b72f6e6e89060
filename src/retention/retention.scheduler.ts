import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { OnEvent } from '@nestjs/event-emitter';
import { AppConfig } from '../config/app-config.js';
import { PURGE_REQUESTED } from '../common/purge.js';
import { RetentionRepository } from './retention.repository.js';
import { RetentionService } from './retention.service.js';

/**
 * In every replica: the cleanup every SVC_RETENTION_INTERVAL, and the purge of deleted runs and projects when one is
 * deleted here and every SVC_RETENTION_PURGE_POLL (so a deletion another replica took, or one a restart interrupted,
 * goes on). Both under the retention lock: whichever replica gets it works, the others pass.
 */
@Injectable()
export class RetentionScheduler implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(RetentionScheduler.name);
  private cleanupTimer?: NodeJS.Timeout;
  private purgeTimer?: NodeJS.Timeout;
  private running?: Promise<void>;
  /** A purge asked for while work ran: it runs after (the work running may have passed the new deletion). */
  private again = false;
  /** A cleanup due while a purge ran: it runs after, not at the next interval. */
  private cleanupDue = false;
  private stopped = false;

  constructor(
    private readonly retention: RetentionService,
    private readonly repo: RetentionRepository,
    private readonly config: AppConfig,
  ) {}

  onApplicationBootstrap(): void {
    const { intervalMs, purgePollMs } = this.config.retention;
    this.cleanupTimer = setInterval(() => this.run('cleanup'), intervalMs);
    this.cleanupTimer.unref();
    this.purgeTimer = setInterval(() => this.run('poll'), purgePollMs);
    this.purgeTimer.unref();
    // A deletion that a stop interrupted resumes now.
    this.run('poll');
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    this.retention.stop();
    clearInterval(this.cleanupTimer);
    clearInterval(this.purgeTimer);
    await this.running;
  }

  @OnEvent(PURGE_REQUESTED)
  onPurgeRequested(): void {
    this.run('purge');
  }

  private run(kind: 'cleanup' | 'purge' | 'poll'): void {
    if (this.stopped) {
      return;
    }
    if (this.running) {
      if (kind === 'cleanup') {
        this.cleanupDue = true;
      } else {
        this.again ||= kind === 'purge';
      }
      return;
    }
    this.running = this.work(kind)
      .catch((error: Error) => this.logger.error(`Retention ${kind} failed: ${error.message}`))
      .finally(() => {
        this.running = undefined;
        if (this.cleanupDue) {
          // A cleanup purges what is queued too.
          this.cleanupDue = false;
          this.again = false;
          this.run('cleanup');
        } else if (this.again) {
          this.again = false;
          this.run('purge');
        }
      });
  }

  private async work(kind: 'cleanup' | 'purge' | 'poll'): Promise<void> {
    if (kind === 'poll' && !(await this.repo.anythingToPurge())) {
      return;
    }
    await this.retention.withLock(false, () =>
      kind === 'cleanup' ? this.retention.cleanupAll() : this.retention.purgeAll(),
    );
  }
}
