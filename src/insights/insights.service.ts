import { Injectable } from '@nestjs/common';
import { AppError } from '../common/app-error.js';
import { countsOf, runSummaryOf } from '../common/run-summary.js';
import { Page, pageRequest, toPage } from '../common/paging/page.js';
import type { PageQueryDto } from '../common/paging/page-query.dto.js';
import type { RunEntity } from '../results/entities.js';
import { toRunDto } from '../results/results.service.js';
import { RunsRepository } from '../results/runs.repository.js';
import type {
  ComparisonDto,
  CompareTestsQueryDto,
  FailureGroupDto,
  StreamDto,
  SuiteDto,
  TestChangeDto,
  TrendDto,
} from './dto/insights.dto.js';
import { CHANGES, InsightsRepository } from './insights.repository.js';
import type { Change } from './insights.repository.js';
import { sameRevision } from './changes.js';
import { issueOf } from '../triage/signatures.repository.js';

/**
 * What a run with no earlier one is compared with: no run has id 0 (identities start at 1), so every test of the
 * run is ADDED, by the same query as any comparison.
 */
const NO_RUN = '0';

@Injectable()
export class InsightsService {
  constructor(
    private readonly insights: InsightsRepository,
    private readonly runs: RunsRepository,
  ) {}

  async failureGroups(runId: string, query: PageQueryDto): Promise<Page<FailureGroupDto>> {
    const page = pageRequest(query, ['count', 'key'] as const, [{ field: 'count', direction: 'DESC' }]);
    await this.found(runId);
    const [rows, total] = await this.insights.failureGroups(runId, page);
    return toPage(
      rows.map((g) => ({
        key: g.key,
        count: g.count,
        failed: g.failed,
        broken: g.broken,
        tests: g.tests,
        example: g.example,
        signatureId: Number(g.signature_id),
        isNew: g.is_new,
        triage: g.triage,
        issue: issueOf(g),
      })),
      total,
      page,
    );
  }

  async suites(runId: string, query: PageQueryDto): Promise<Page<SuiteDto>> {
    const page = pageRequest(query, ['suite', 'total', 'failed'] as const, [
      { field: 'suite', direction: 'ASC' },
    ]);
    await this.found(runId);
    const [rows, total] = await this.insights.suites(runId, page);
    return toPage(rows, total, page);
  }

  async compare(runId: string, baseId: string | undefined): Promise<ComparisonDto> {
    const { head, base } = await this.pair(runId, baseId);
    const same = sameRevision(head, base);
    const counts = await this.insights.changeCounts(head.id, base?.id ?? NO_RUN, same);
    const n = (c: Change) => counts.get(c) ?? 0;
    return {
      head: toRunDto(head),
      base: base ? toRunDto(base) : null,
      sameRevision: same,
      summary: {
        newFailures: n('NEW_FAILURE'),
        fixed: n('FIXED'),
        stillFailing: n('STILL_FAILING'),
        flaky: n('FLAKY'),
        added: n('ADDED'),
        removed: n('REMOVED'),
        unchanged: n('UNCHANGED'),
      },
    };
  }

  async compareTests(runId: string, query: CompareTestsQueryDto): Promise<Page<TestChangeDto>> {
    const page = pageRequest(query, ['suite', 'name'] as const, [
      { field: 'suite', direction: 'ASC' },
      { field: 'name', direction: 'ASC' },
    ]);
    const { head, base } = await this.pair(runId, query.base);
    const changes = query.change?.length
      ? [...new Set(query.change)]
      : CHANGES.filter((c) => c !== 'UNCHANGED');
    const [rows, total] = await this.insights.changes(
      head.id,
      base?.id ?? NO_RUN,
      sameRevision(head, base),
      changes,
      page,
    );
    return toPage(
      rows.map((r) => ({ ...r, testId: Number(r.testId) })),
      total,
      page,
    );
  }

  async streams(projectId: string, query: PageQueryDto): Promise<Page<StreamDto>> {
    const page = pageRequest(query, [] as const, []);
    const [rows, total] = await this.insights.streams(projectId, page);
    return toPage(
      rows.map((r) => ({
        stream: r.stream,
        runs: r.runs,
        latestRun: runSummaryOf(r),
      })),
      total,
      page,
    );
  }

  async trend(projectId: string, runs = 30, stream?: string): Promise<TrendDto> {
    const rows = await this.insights.trend(projectId, runs, stream);
    return {
      points: rows.reverse().map((r) => ({
        runId: Number(r.id),
        name: r.name,
        status: r.status,
        stream: r.stream,
        startedAt: r.started_at.toISOString(),
        durationMs: r.finished_at ? r.finished_at.getTime() - r.started_at.getTime() : null,
        ...countsOf(r),
      })),
    };
  }

  /** The run and the one to compare it with: `baseId`, of the same project, or the run before it. */
  private async pair(
    runId: string,
    baseId: string | undefined,
  ): Promise<{ head: RunEntity; base: RunEntity | null }> {
    const head = await this.found(runId);
    if (baseId === undefined) {
      const previous = await this.insights.previousRun(head.id);
      return { head, base: previous ? await this.found(previous) : null };
    }
    if (baseId === String(head.id)) {
      throw AppError.validation('base must be another run than the one compared');
    }
    const base = await this.runs.findRun(baseId);
    // A run of another project is not named: the caller may not see it.
    if (!base || String(base.projectId) !== String(head.projectId)) {
      throw AppError.notFound(`Run ${baseId} not found in the project of run ${runId}`);
    }
    return { head, base };
  }

  private async found(runId: string): Promise<RunEntity> {
    const run = await this.runs.findRun(runId);
    if (!run) {
      throw AppError.notFound(`Run ${runId} not found`);
    }
    return run;
  }
}
