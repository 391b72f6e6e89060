import { Injectable } from '@nestjs/common';
import type { NotifyEvent } from '../notifications/notification.events.js';
import { MAX_SIGNATURES } from '../notifications/payload.js';
import type { RunDto } from '../results/dto/results.dto.js';
import { SignaturesRepository } from './signatures.repository.js';
import { toSignatureDto } from './triage.service.js';

/**
 * `failure.new` (API.md, "Notifications"): a run that brought new signatures (first seen in it) announces all of
 * them in one event when it finishes. It is part of the run's finish announcement (a FinishNotice of
 * NotificationOutbox), which the finish owes in its own transaction: by then the write path has stored every
 * signature of its results (triage.observer.ts, inside each write's transaction), and a crash right after the
 * finish's commit leaves it to the sweep of another replica. Once per run: the event's key is the run's, so a
 * second announcement (a sweep after a replica that got there after all) adds nothing.
 */
@Injectable()
export class TriageNotifier {
  constructor(private readonly signatures: SignaturesRepository) {}

  /** The run's failure.new, or undefined when it brought no new signature. */
  async failureNew(run: RunDto): Promise<NotifyEvent | undefined> {
    // The first 100 and their count, as a delivery lists them (payload.ts): a run of thousands of new failures is
    // not read whole to be cut.
    const [rows, count] = await this.signatures.newInRun(String(run.id), MAX_SIGNATURES);
    if (!count) {
      return undefined;
    }
    return {
      type: 'failure.new',
      projectId: String(run.projectId),
      runId: String(run.id),
      data: { run, signatures: rows.map(toSignatureDto), count },
    };
  }
}
