import { Injectable } from '@nestjs/common';
import { EventEmitter2 } from '@nestjs/event-emitter';
import type { EntityManager } from 'typeorm';
import type { IngestMessage } from '../infra/queue/ingest-queue.js';
import type { RunEntity } from '../results/entities.js';
import type { ResultInput } from '../results/result-input.js';
import {
  RESULTS_EVENT,
  RUN_FINISHED_EVENT,
  type ResultsEvent,
  type RunFinishedEvent,
} from '../results/results.events.js';
import type { RunDto } from '../results/dto/results.dto.js';
import { ResultsObservers } from '../results/results-observers.js';
import { ResultsWriter, type WriteOutcome } from '../results/results.writer.js';
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
    private readonly observers: ResultsObservers,
  ) {}

  async handle(batch: IngestMessage[]): Promise<void> {
    const emitted: ResultsEvent[] = [];
    const written: WriteOutcome[] = [];
    // Runs whose outcomes became final in this batch (finished, or results stored into a finished run).
    const final = new Map<string, RunFinishedEvent>();
    await this.repository.transaction(async (tx) => {
      await this.repository.lockRuns(
        tx,
        batch.map((m) => ({ key: runKey(m), exclusive: m.kind !== 'results' })),
      );
      // Results for one run are written together (one COPY for several messages); a run or finish message
      // first writes what came before it for its run, so the batch's order per run is kept.
      const waiting = new Map<string, ResultsMessage[]>();
      const flush = async (key: string) => {
        const group = waiting.get(key);
        if (group) {
          waiting.delete(key);
          await this.applyResults(tx, group, emitted, written, final);
        }
      };
      for (const message of batch) {
        const key = runKey(message);
        if (message.kind === 'results') {
          const group = waiting.get(key);
          if (group) {
            group.push(message);
          } else {
            waiting.set(key, [message]);
          }
          continue;
        }
        await flush(key);
        await this.apply(tx, message, emitted, written, final);
      }
      for (const key of [...waiting.keys()]) {
        await flush(key);
      }
    });
    this.writer.remember(written);
    // After the commit, before the run is announced finished: its gate (see RUN_FINISHED_EVENT).
    for (const event of final.values()) {
      await this.events.emitAsync(RUN_FINISHED_EVENT, event);
    }
    for (const event of emitted) {
      if (event.event === 'run.finished' && final.has(event.runId)) {
        // Read again for what the finish decided after the commit (its gate).
        const run = event.data.run as RunDto;
        const now = await this.repository.findRun(undefined, event.projectId, run.uuid!);
        event.data.run = now ? toRunDto(now) : run;
      }
      this.events.emit(RESULTS_EVENT, event);
    }
  }

  private async apply(
    tx: EntityManager,
    message: IngestMessage,
    emitted: ResultsEvent[],
    written: WriteOutcome[],
    final: Map<string, RunFinishedEvent>,
  ): Promise<void> {
    if (message.kind === 'run') {
      const run = await this.repository.insertRun(tx, {
        projectId: message.projectId,
        uuid: message.uuid,
        name: message.name,
        startedAt: message.startedAt ? new Date(message.startedAt) : new Date(),
        attributes: message.attributes ?? {},
        stream: message.stream ?? null,
      });
      if (!run) {
        return;
      }
      emitted.push({ projectId: run.projectId, event: 'run.created', runId: run.id, data: { run: toRunDto(run) } });
      for (const pending of await this.repository.takePending(tx, message.projectId, message.uuid)) {
        await this.apply(tx, pending.payload, emitted, written, final);
      }
      return;
    }
    const run = await this.repository.findRun(tx, message.projectId, message.runUuid);
    if (!run) {
      await this.repository.keepPending(tx, message);
      return;
    }
    if (message.kind === 'results') {
      await this.addResults(tx, run, [message], emitted, written, final);
    } else {
      if (await this.repository.finish(tx, run.id, message.finishedAt ? new Date(message.finishedAt) : new Date())) {
        await this.observers.runFinished(tx, { id: String(run.id), projectId: String(run.projectId) });
        final.set(run.id, { projectId: run.projectId, runId: run.id });
      }
      const finished = (await this.repository.findRun(tx, run.projectId, message.runUuid))!;
      emitted.push({ projectId: run.projectId, event: 'run.finished', runId: run.id, data: { run: toRunDto(finished) } });
    }
  }

  /** Results messages of one run: stored in one write, or kept pending when the run has not arrived yet. */
  private async applyResults(
    tx: EntityManager,
    messages: ResultsMessage[],
    emitted: ResultsEvent[],
    written: WriteOutcome[],
    final: Map<string, RunFinishedEvent>,
  ): Promise<void> {
    const { projectId, runUuid } = messages[0];
    const run = await this.repository.findRun(tx, projectId, runUuid);
    if (!run) {
      for (const message of messages) {
        await this.repository.keepPending(tx, message);
      }
      return;
    }
    await this.addResults(tx, run, messages, emitted, written, final);
  }

  /** One `results.added` per message (the batch its client sent) that stored anything. */
  private async addResults(
    tx: EntityManager,
    run: RunEntity,
    messages: ResultsMessage[],
    emitted: ResultsEvent[],
    written: WriteOutcome[],
    final: Map<string, RunFinishedEvent>,
  ): Promise<void> {
    const items: ResultInput[] = messages.flatMap((m) => m.results);
    const outcome = await this.writer.write(tx, run, items);
    written.push(outcome);
    if ((run.status === 'FINISHED' || outcome.runFinished) && outcome.ids.some((id) => id !== null)) {
      // Results processed after their run's finish (or while a finish committed, which did not count them): its gate
      // is evaluated again.
      final.set(run.id, { projectId: run.projectId, runId: run.id });
    }
    let offset = 0;
    for (const message of messages) {
      const n = message.results.length;
      let added = 0;
      for (let i = offset; i < offset + n; i++) {
        if (outcome.ids[i]) {
          added += 1;
        }
      }
      offset += n;
      if (added) {
        emitted.push({ projectId: run.projectId, event: 'results.added', runId: run.id, data: { counts: outcome.counts, added } });
      }
    }
  }
}

function runKey(message: IngestMessage): string {
  return `${message.projectId}:${message.kind === 'run' ? message.uuid : message.runUuid}`;
}

type ResultsMessage = Extract<IngestMessage, { kind: 'results' }>;

