import { Injectable } from '@nestjs/common';
import { EventEmitter2 } from '@nestjs/event-emitter';
import { AUDIT_EVENT, type AuditRecord } from '../audit/audit.events.js';
import { AppError } from '../common/app-error.js';
import type { AuthUser } from '../common/auth-user.js';
import { NotificationOutbox } from '../notifications/notification-outbox.js';
import { type Page, pageRequest, toPage } from '../common/paging/page.js';
import type { PageQueryDto } from '../common/paging/page-query.dto.js';
import type { TestCaseDto } from '../results/dto/results.dto.js';
import { ResultsService } from '../results/results.service.js';
import { RunsRepository } from '../results/runs.repository.js';
import type { QuarantineTestDto, QuarantinedTestDto } from './dto/quarantine.dto.js';
import { newHealth, quarantineActive, quarantined, released } from './flakiness.js';
import { STABILITY_EVENT, type StabilityEvent } from './stability.events.js';
import { TestHealthRepository } from './test-health.repository.js';

const QUARANTINE_SORTS = { since: 'h.q_since', name: 't.name', id: 'h.test_id' } as const;

/** Quarantine by a person, and the list a CI job reads (API.md, "Test health"). */
@Injectable()
export class StabilityService {
  constructor(
    private readonly health: TestHealthRepository,
    private readonly runs: RunsRepository,
    private readonly results: ResultsService,
    private readonly events: EventEmitter2,
    private readonly notifications: NotificationOutbox,
  ) {}

  /** Quarantines the test (again: its reason and until replaced), as a person's (never released by passing runs). */
  async quarantine(
    user: AuthUser,
    projectId: string,
    testId: string,
    dto: QuarantineTestDto,
    ip: string,
  ): Promise<TestCaseDto> {
    const test = await this.testOf(projectId, testId);
    const now = new Date();
    const until = dto.until === undefined ? null : new Date(dto.until);
    if (until && until.getTime() <= now.getTime()) {
      throw AppError.validation('until must be in the future');
    }
    const reason = dto.reason.trim();
    await this.health.change(projectId, test.id, async (h, save, tx) => {
      const base = h ?? newHealth(test.createdAt);
      await save(quarantined(base, { since: now, reason, auto: false, byUserId: user.id, until }, now));
      // One delivery per quarantine: its start names it. Announced once this commits (on STABILITY_EVENT).
      await this.notifications.owe(
        {
          type: 'test.quarantined',
          projectId,
          testId: test.id,
          key: `test.quarantined:${test.id}:${now.toISOString()}`,
        },
        tx,
      );
    });
    this.tell({ projectId, event: 'test.quarantined', testId: test.id });
    this.audit({
      type: 'TEST_QUARANTINED',
      actorId: user.id,
      ip,
      target: `project:${projectId}`,
      details: { testId: Number(test.id), auto: false, reason, until: until?.toISOString() ?? null },
    });
    return this.results.getTest(projectId, test.id);
  }

  /** Ends the test's quarantine; nothing to do (and nothing audited) when it has none. */
  async release(user: AuthUser, projectId: string, testId: string, ip: string): Promise<void> {
    const test = await this.testOf(projectId, testId);
    const now = new Date();
    const ended = await this.health.change(projectId, test.id, async (h, save) => {
      if (!h?.quarantine) {
        return null;
      }
      await save(released(h, now));
      return { auto: h.quarantine.auto, active: quarantineActive(h.quarantine, now) };
    });
    if (!ended) {
      return;
    }
    this.tell({ projectId, event: 'test.released', testId: test.id });
    this.audit({
      type: 'TEST_RELEASED',
      actorId: user.id,
      ip,
      target: `project:${projectId}`,
      details: {
        testId: Number(test.id),
        auto: ended.auto,
        ...(ended.active ? {} : { why: 'until passed' }),
      },
    });
  }

  async listQuarantined(projectId: string, query: PageQueryDto): Promise<Page<QuarantinedTestDto>> {
    const page = pageRequest(query, Object.keys(QUARANTINE_SORTS) as (keyof typeof QUARANTINE_SORTS)[], [
      { field: 'since', direction: 'DESC' },
    ]);
    const order = [
      ...page.sort,
      ...(page.sort.some((s) => s.field === 'id') ? [] : [{ field: 'id' as const, direction: 'ASC' }]),
    ]
      .map((s) => `${QUARANTINE_SORTS[s.field]} ${s.direction}`)
      .join(', ');
    const [rows, total] = await this.health.quarantined(projectId, order, page.size, page.offset);
    return toPage(
      rows.map((r) => ({
        testId: Number(r.testId),
        suite: r.suite,
        name: r.name,
        since: r.since.toISOString(),
        reason: r.reason,
        auto: r.auto,
        until: r.until?.toISOString() ?? null,
      })),
      total,
      page,
    );
  }

  /** The test, of this project: else 404 (a test of another project is not found here). */
  private async testOf(projectId: string, testId: string): Promise<{ id: string; createdAt: Date }> {
    const test = /^\d{1,18}$/.test(testId) ? await this.runs.findTest(projectId, testId) : null;
    if (!test) {
      throw AppError.notFound(`Test ${testId} not found`);
    }
    return { id: String(test.id), createdAt: test.createdAt };
  }

  private tell(event: StabilityEvent): void {
    this.events.emit(STABILITY_EVENT, event);
  }

  private audit(record: AuditRecord): void {
    this.events.emit(AUDIT_EVENT, record);
  }
}
