import { Injectable } from '@nestjs/common';
import { EventEmitter2 } from '@nestjs/event-emitter';
import { ProjectAccessService } from '../access/project-access.service.js';
import { ProjectsRepository } from '../access/projects.repository.js';
import { AUDIT_EVENT, type AuditRecord } from '../audit/audit.events.js';
import { AppError } from '../common/app-error.js';
import type { AuthUser } from '../common/auth-user.js';
import { Page, pageRequest, toPage } from '../common/paging/page.js';
import { GATE_REEVALUATE, type GateReevaluate } from '../gates/gate.events.js';
import type {
  FailureDetailDto,
  FailureSignatureDto,
  FailuresQueryDto,
  PatchFailureDto,
  SimilarFailureDto,
} from './dto/failure.dto.js';
import {
  type FailureFilter,
  issueOf,
  type SignatureRow,
  SignaturesRepository,
} from './signatures.repository.js';

/** Failure signatures: the project's list with search, one with its history, similar ones, and triage. */
@Injectable()
export class TriageService {
  constructor(
    private readonly signatures: SignaturesRepository,
    private readonly projects: ProjectsRepository,
    private readonly access: ProjectAccessService,
    private readonly events: EventEmitter2,
  ) {}

  async list(user: AuthUser, projectId: string, query: FailuresQueryDto): Promise<Page<FailureSignatureDto>> {
    const page = pageRequest(query, ['lastSeen', 'occurrences', 'firstSeen'] as const, [
      { field: 'lastSeen', direction: 'DESC' },
    ]);
    const filter: FailureFilter = {
      words: query.q?.split(/\s+/).filter((w) => w.length > 0),
      triage: query.triage,
      assigneeId: query.assignee === 'me' ? user.id : query.assignee,
    };
    if (query.new === 'true') {
      // New: first seen in the project's latest run, the one its `latestRun` names (of its default stream).
      const latest = (await this.projects.latestRuns([projectId])).get(projectId);
      if (!latest) {
        return toPage([], 0, page);
      }
      filter.firstRunId = String(latest.id);
    }
    const [rows, total] = await this.signatures.list(projectId, filter, page);
    return toPage(rows.map(toSignatureDto), total, page);
  }

  async get(id: string): Promise<FailureDetailDto> {
    const signature = await this.found(id);
    const [runs, tests] = await Promise.all([this.signatures.recentRuns(id), this.signatures.topTests(id)]);
    return {
      ...toSignatureDto(signature),
      recentRuns: runs.map((r) => ({
        runId: Number(r.run_id),
        name: r.name,
        at: r.started_at.toISOString(),
        count: r.occurrences,
      })),
      topTests: tests.map((t) => ({
        testId: Number(t.test_id),
        suite: t.suite,
        name: t.name,
        count: t.occurrences,
      })),
    };
  }

  async similar(id: string): Promise<SimilarFailureDto[]> {
    const signature = await this.found(id);
    const rows = await this.signatures.similar(signature);
    return rows.map((r) => ({ signature: toSignatureDto(r), similarity: round(r.similarity) }));
  }

  /** A person's triage (REPORTER, checked by the route): applies to every occurrence, past and future; audited. */
  async change(user: AuthUser, id: string, dto: PatchFailureDto, ip: string): Promise<FailureDetailDto> {
    const signature = await this.found(id);
    const projectId = String(signature.project_id);
    if (dto.issue) {
      checkIssueUrl(dto.issue.url);
    }
    if (dto.assigneeId !== undefined && dto.assigneeId !== null) {
      if (!(await this.access.roleOf(dto.assigneeId, projectId))) {
        throw AppError.validation(`assigneeId ${dto.assigneeId} is no user who can see project ${projectId}`);
      }
    }
    const change = {
      triage: dto.triage,
      issue:
        dto.issue === undefined
          ? undefined
          : dto.issue && { url: dto.issue.url, key: dto.issue.key, title: dto.issue.title },
      note: dto.note,
      assigneeId: dto.assigneeId,
    };
    await this.signatures.change(id, change);
    const record: AuditRecord = {
      type: 'FAILURE_TRIAGED',
      actorId: user.id,
      ip,
      target: `project:${projectId}`,
      details: {
        failureId: Number(id),
        key: signature.key,
        changed: Object.fromEntries(Object.entries(change).filter(([, v]) => v !== undefined)),
      },
    };
    this.events.emit(AUDIT_EVENT, record);
    if (change.triage !== undefined || change.issue !== undefined) {
      // What the gate leaves out (a known issue) and counts (a new failure still to investigate) changed: the
      // latest finished run of each stream in which one of the signature's tests ran is evaluated again.
      const testIds = await this.signatures.testsOf(id, MAX_REEVALUATE_TESTS);
      this.events.emit(GATE_REEVALUATE, {
        projectId,
        ...(testIds ? { testIds } : {}),
      } satisfies GateReevaluate);
    }
    return this.get(id);
  }

  private async found(id: string): Promise<SignatureRow> {
    const signature = /^\d{1,18}$/.test(id) ? await this.signatures.find(id) : null;
    if (!signature) {
      throw AppError.notFound(`Failure ${id} not found`);
    }
    return signature;
  }
}

/** A signature of more tests than this has the latest run of every stream evaluated again, not a list of tests. */
const MAX_REEVALUATE_TESTS = 10_000;

/** An issue link is followed by people: http(s) only (a `javascript:` or `data:` URL would run in their browser). */
function checkIssueUrl(url: string): void {
  let parsed: URL | undefined;
  try {
    parsed = new URL(url);
  } catch {
    parsed = undefined;
  }
  if (!parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') || !parsed.hostname) {
    throw AppError.validation('issue.url must be an http or https URL');
  }
}

function round(n: number): number {
  return Math.round(n * 1000) / 1000;
}

export function toSignatureDto(s: SignatureRow): FailureSignatureDto {
  return {
    id: Number(s.id),
    projectId: Number(s.project_id),
    key: s.key,
    sampleMessage: s.sample_message,
    firstSeen: { runId: Number(s.first_run_id), at: s.first_seen_at.toISOString() },
    lastSeen: { runId: Number(s.last_run_id), at: s.last_seen_at.toISOString() },
    occurrences: Number(s.occurrences),
    tests: s.tests,
    runs: s.runs,
    triage: s.triage,
    issue: issueOf(s),
    note: s.note,
    assignee:
      s.assignee_id === null
        ? null
        : { id: Number(s.assignee_id), email: s.assignee_email ?? '', fullName: s.assignee_full_name },
    suggested:
      s.suggested_from_id === null
        ? null
        : { fromId: Number(s.suggested_from_id), similarity: round(s.suggested_similarity ?? 0) },
  };
}
