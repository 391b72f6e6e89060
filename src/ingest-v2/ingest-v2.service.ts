import { Injectable } from '@nestjs/common';
import { AppError } from '../common/app-error.js';
import { IngestQueue } from '../infra/queue/ingest-queue.js';
import type { RunCounts } from '../results/result-input.js';
import type { AcceptedUuidDto, AcceptedUuidsDto, AddResultsV2Dto, CreateRunV2Dto, FinishRunV2Dto, RunV2StatusDto } from './dto/v2.dto.js';
import { IngestV2Repository } from './ingest-v2.repository.js';

/**
 * The door of V2: input arrives here validated and authorised, and is published; the answer (202) is given
 * only once the queue holds the message durably. UUIDs are answered lower-case.
 */
@Injectable()
export class IngestV2Service {
  constructor(
    private readonly queue: IngestQueue,
    private readonly repository: IngestV2Repository,
  ) {}

  async createRun(projectId: string, dto: CreateRunV2Dto): Promise<AcceptedUuidDto> {
    const uuid = dto.uuid.toLowerCase();
    await this.queue.publish({
      kind: 'run',
      projectId,
      uuid,
      name: dto.name.trim(),
      startedAt: dto.startedAt,
      attributes: dto.attributes,
      stream: dto.stream,
    });
    return { uuid };
  }

  /**
   * `body`, when given, is the exact JSON text `dto` was parsed from, as UTF-8 (and the schema admits nothing
   * else): it is queued as it came rather than serialised again, and the consumer lower-cases its UUIDs.
   */
  async addResults(projectId: string, runUuid: string, dto: AddResultsV2Dto, body?: Buffer): Promise<AcceptedUuidsDto> {
    const uuids = dto.results.map((r) => r.uuid.toLowerCase());
    const run = runUuid.toLowerCase();
    await this.queue.publish(
      body
        ? { kind: 'results', projectId, runUuid: run, body }
        : { kind: 'results', projectId, runUuid: run, results: dto.results.map((r, i) => ({ ...r, uuid: uuids[i] })) },
    );
    return { uuids };
  }

  async finish(projectId: string, runUuid: string, dto: FinishRunV2Dto): Promise<AcceptedUuidDto> {
    const uuid = runUuid.toLowerCase();
    await this.queue.publish({ kind: 'finish', projectId, runUuid: uuid, finishedAt: dto.finishedAt });
    return { uuid };
  }

  async status(projectId: string, runUuid: string): Promise<RunV2StatusDto> {
    const run = await this.repository.findRun(undefined, projectId, runUuid.toLowerCase());
    if (!run) {
      throw AppError.notFound(`Run ${runUuid} not found (yet): it may still be in the queue`);
    }
    const counts: RunCounts = {
      total: run.countTotal,
      passed: run.countPassed,
      failed: run.countFailed,
      broken: run.countBroken,
      skipped: run.countSkipped,
      passedOnRetry: run.countPassedOnRetry,
      attempts: run.countAttempts,
    };
    return { uuid: run.uuid!, id: Number(run.id), status: run.status, counts };
  }
}
