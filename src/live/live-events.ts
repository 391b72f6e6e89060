import { Injectable } from '@nestjs/common';
import { OnEvent } from '@nestjs/event-emitter';
import { LiveRelay } from '../infra/relay/live-relay.js';
import { RESULTS_EVENT, type ResultsEvent } from '../results/results.events.js';
import { STABILITY_EVENT, type StabilityEvent } from '../stability/stability.events.js';

/** Publishes each domain event of results/ (V1, V2, import) and stability/ (test health) once, to the relay, which brings it to every replica. */
@Injectable()
export class LiveEvents {
  constructor(private readonly relay: LiveRelay) {}

  @OnEvent(RESULTS_EVENT)
  publish(event: ResultsEvent): void {
    this.relay.publish({
      projectId: event.projectId,
      event: event.event,
      data: { ...event.data, runId: Number(event.runId) },
      at: new Date().toISOString(),
    });
  }

  /** `test.flaky`, `test.quarantined`, `test.released`: `data: {testId, runId?}` (API.md, "Test health"). */
  @OnEvent(STABILITY_EVENT)
  publishTest(event: StabilityEvent): void {
    this.relay.publish({
      projectId: event.projectId,
      event: event.event,
      data: { testId: Number(event.testId), ...(event.runId ? { runId: Number(event.runId) } : {}) },
      at: new Date().toISOString(),
    });
  }
}
