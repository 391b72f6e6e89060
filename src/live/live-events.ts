import { Injectable } from '@nestjs/common';
import { OnEvent } from '@nestjs/event-emitter';
import { LiveRelay } from '../infra/relay/live-relay.js';
import { RESULTS_EVENT, type ResultsEvent } from '../results/results.events.js';

/** Publishes each domain event of results/ (V1, V2, import) once, to the relay, which brings it to every replica. */
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
}
