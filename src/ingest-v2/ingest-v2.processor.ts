import { Injectable } from '@nestjs/common';
import { EventEmitter2 } from '@nestjs/event-emitter';
import type { EntityManager } from 'typeorm';
import type { IngestMessage } from '../infra/queue/ingest-queue.js';
import type { RunEntity } from '../results/entities.js';
import type { ResultInput } from '../results/result-input.js';
import { RESULTS_EVENT, ResultsEvent } from '../results/results.events.js';
import { ResultsWriter } from '../results/results.writer.js';
import { toRunDto } from '../results/results.service.js';
import { IngestV2Repository } from './ingest-v2.repository.js';

/**
 * The consumer side of V2: a batch of queued messages becomes one database transaction. Every step is
 * idempotent by UUID, so a redelivered message changes nothing; results or a finish that arrive before their
 * run wait in pending_ingest and are applied when the run arrives.
 */
@Injectable()
export class IngestV2Processor {
  constructor(
    private readonly repository: IngestV2Repository,
    private readonly writer: ResultsWriter,
    private readonly events: EventEmitter2,
  ) {}

  async handle(batch: IngestMessage[]): Promise<void> {
    const emitted: ResultsEvent[] = [];
    await this.repository.transaction(async (tx) => {
      await this.repository.lockRuns(tx, batch.map(runKey));
      for (const message of batch) {
        await this.apply(tx, message, emitted);
      }
    });
    for (const event of emitted) {
      this.events.emit(RESULTS_EVENT, event);
    }
  }

  private async apply(tx: EntityManager, message: IngestMessage, emitted: ResultsEvent[]): Promise<void> {
    if (message.kind === 'run') {
      const run = await this.repository.insertRun(tx, {
        projectId: message.projectId,
        uuid: message.uuid,
        name: message.name,
        startedAt: message.startedAt ? new Date(message.startedAt) : new Date(),
        attributes: message.attributes ?? {},
      });
      if (!run) {
        return;
      }
      emitted.push({ projectId: run.projectId, event: 'run.created', runId: run.id, data: { run: toRunDto(run) } });
      for (const pending of await this.repository.takePending(tx, message.projectId, message.uuid)) {
        await this.apply(tx, pending.payload, emitted);
      }
      return;
    }
    const run = await this.repository.findRun(tx, message.projectId, message.runUuid);
    if (!run) {
      await this.repository.keepPending(tx, message);
      return;
    }
    if (message.kind === 'results') {
      await this.addResults(tx, run, message.results.map(toResultInput), emitted);
    } else {
      await this.repository.finish(tx, run.id, message.finishedAt ? new Date(message.finishedAt) : new Date());
      const finished = (await this.repository.findRun(tx, run.projectId, message.runUuid))!;
      emitted.push({ projectId: run.projectId, event: 'run.finished', runId: run.id, data: { run: toRunDto(finished) } });
    }
  }

  private async addResults(tx: EntityManager, run: RunEntity, items: ResultInput[], emitted: ResultsEvent[]): Promise<void> {
    const outcome = await this.writer.write(tx, run, items);
    const added = outcome.ids.filter(Boolean).length;
    if (added) {
      emitted.push({ projectId: run.projectId, event: 'results.added', runId: run.id, data: { counts: outcome.counts, added } });
    }
  }
}

function runKey(message: IngestMessage): string {
  return `${message.projectId}:${message.kind === 'run' ? message.uuid : message.runUuid}`;
}

function toResultInput(r: Extract<IngestMessage, { kind: 'results' }>['results'][number]): ResultInput {
  return { ...r, startedAt: r.startedAt ? new Date(r.startedAt) : undefined };
}
