import { Module, OnModuleInit } from '@nestjs/common';
import { AccessModule } from '../access/access.module.js';
import { AppConfig } from '../config/app-config.js';
import { NotificationsModule } from '../notifications/notifications.module.js';
import { ResultsModule } from '../results/results.module.js';
import { ResultsObservers } from '../results/results-observers.js';
import { FlakyPolicyCache } from './flaky-policy.cache.js';
import { QuarantineSweeper } from './quarantine.sweeper.js';
import { SETTLED_TESTS_CAPACITY, SettledTests } from './settled-tests.js';
import { StabilityController } from './stability.controller.js';
import { StabilityObserver } from './stability.observer.js';
import { StabilityService } from './stability.service.js';
import {
  HEALTH_WRITE_OPTIONS,
  type HealthWriteOptions,
  TestHealthRepository,
} from './test-health.repository.js';

/**
 * Test health (API.md, "Test health: flaky tests and quarantine"; DESIGN.md, "Derived state"): flakiness kept as
 * results are written, through the results writer's observers, and quarantine.
 */
@Module({
  imports: [AccessModule, ResultsModule, NotificationsModule],
  controllers: [StabilityController],
  providers: [
    {
      provide: HEALTH_WRITE_OPTIONS,
      useFactory: (config: AppConfig): HealthWriteOptions => ({
        quietSecondRun: config.healthQuietSecondRun,
      }),
      inject: [AppConfig],
    },
    {
      provide: SettledTests,
      useFactory: (config: AppConfig) =>
        new SettledTests(config.healthSettledCache ? SETTLED_TESTS_CAPACITY : 0),
      inject: [AppConfig],
    },
    TestHealthRepository,
    FlakyPolicyCache,
    StabilityObserver,
    StabilityService,
    QuarantineSweeper,
  ],
  exports: [QuarantineSweeper],
})
export class StabilityModule implements OnModuleInit {
  constructor(
    private readonly observers: ResultsObservers,
    private readonly observer: StabilityObserver,
    private readonly config: AppConfig,
  ) {}

  onModuleInit(): void {
    // Off only for the bench, which measures ingest with and without it (SVC_FLAKY_DETECTION).
    if (this.config.flakyDetection) {
      this.observers.register(this.observer);
    }
  }
}
