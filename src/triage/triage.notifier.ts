import { Injectable, Logger } from '@nestjs/common';
import { EventEmitter2, OnEvent } from '@nestjs/event-emitter';
import { NOTIFY, type NotifyEvent } from '../notifications/notification.events.js';
import { MAX_SIGNATURES } from '../notifications/payload.js';
import { RUN_FINISHED_EVENT, type RunFinishedEvent } from '../results/results.events.js';
import { ResultsService } from '../results/results.service.js';
import { SignaturesRepository } from './signatures.repository.js';
import { toSignatureDto } from './triage.service.js';

/**
 * `failure.new` (API.md, "Notifications"): a run that brought new signatures (first seen in it) announces all of
 * them in one event when it finishes, after its commit: by then the write path has stored every signature of its
 * results (triage.observer.ts, inside each write's transaction). Once per run: the event's key is the run's, so a
 * second finish announcement (V2 results processed after the run's finish) adds nothing.
 */
@Injectable()
export class TriageNotifier {
  private readonly logger = new Logger('Triage');

  constructor(
    private readonly signatures: SignaturesRepository,
    private readonly results: ResultsService,
    private readonly events: EventEmitter2,
  ) {}

  /** Never throws (RUN_FINISHED_EVENT's listeners are awaited by the surface that finished the run). */
  @OnEvent(RUN_FINISHED_EVENT)
  async onRunFinished(event: RunFinishedEvent): Promise<void> {
    try {
      // The first 100 and their count, as a delivery lists them (payload.ts): a run of thousands of new
      // failures is not read whole to be cut.
      const [rows, count] = await this.signatures.newInRun(event.runId, MAX_SIGNATURES);
      if (!count) {
        return;
      }
      const run = await this.results.getRun(event.runId);
      // Awaited: the event is in the outbox before the finish answers.
      await this.events.emitAsync(NOTIFY, {
        type: 'failure.new',
        projectId: event.projectId,
        runId: event.runId,
        data: { run, signatures: rows.map(toSignatureDto), count },
      } satisfies NotifyEvent);
    } catch (error) {
      this.logger.error(
        `The new failures of run ${event.runId} were not announced: ${(error as Error).message}`,
      );
    }
  }
}
