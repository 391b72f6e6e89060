import { Module, OnModuleInit } from '@nestjs/common';
import { AccessModule } from '../access/access.module.js';
import { ProjectLocator } from '../access/project-locator.js';
import { AppConfig } from '../config/app-config.js';
import { NotificationOutbox } from '../notifications/notification-outbox.js';
import { NotificationsModule } from '../notifications/notifications.module.js';
import { ResultFailures } from '../results/result-failures.js';
import { ResultsObservers } from '../results/results-observers.js';
import { ResultsModule } from '../results/results.module.js';
import { SignaturesRepository } from './signatures.repository.js';
import { TriageController } from './triage.controller.js';
import { TriageNotifier } from './triage.notifier.js';
import { TriageObserver } from './triage.observer.js';
import { TriageService } from './triage.service.js';

/** Failure triage across runs (API.md): signatures kept by the results writer, their search, similarity and triage. */
@Module({
  imports: [AccessModule, ResultsModule, NotificationsModule],
  controllers: [TriageController],
  providers: [SignaturesRepository, TriageService, TriageNotifier],
})
export class TriageModule implements OnModuleInit {
  constructor(
    private readonly locator: ProjectLocator,
    private readonly observers: ResultsObservers,
    private readonly failures: ResultFailures,
    private readonly signatures: SignaturesRepository,
    private readonly config: AppConfig,
    private readonly notifications: NotificationOutbox,
    private readonly notifier: TriageNotifier,
  ) {}

  onModuleInit(): void {
    this.locator.register('failureId', 'Failure', (id) => this.signatures.projectOf(id));
    this.failures.provide((runId, resultIds) => this.signatures.ofResults(runId, resultIds));
    if (this.config.triage.signatures) {
      this.observers.register(new TriageObserver());
    }
    this.notifications.addFinishNotice((run) => this.notifier.failureNew(run));
  }
}
