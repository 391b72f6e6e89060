import { HeapTrim } from '../common/heap-trim.js';
import { Injectable } from '@nestjs/common';
import { EventEmitter2 } from '@nestjs/event-emitter';
import type { Request } from 'express';
import { ProjectAccessService } from '../access/project-access.service.js';
import { AppError, ErrorCode } from '../common/app-error.js';
import type { AuthUser } from '../common/auth-user.js';
import { oneLine } from '../common/text.js';
import { AppConfig } from '../config/app-config.js';
import type { RunCounts } from '../results/result-input.js';
import { RESULTS_EVENT, ResultsEvent } from '../results/results.events.js';
import { ResultsService } from '../results/results.service.js';
import type { ImportQueryDto, ImportResultDto } from './dto/import.dto.js';
import { ImportSlots } from './import-slots.js';
import { DETECT_HEAD_BYTES, detectFormat } from './parsers/detect.js';
import { parseReport } from './parsers/parse-report.js';
import {
  isReportFormat,
  type ParsedResult,
  REPORT_FORMATS,
  ReportError,
  type ReportFormat,
} from './parsers/report-parser.js';
import {
  MAX_ZIP_ENTRIES,
  peek,
  RAW_TYPES,
  ReportSource,
  reportSources,
  type UploadLimits,
} from './upload.js';

export const IMPORT_FORMATS = ['auto', ...REPORT_FORMATS] as const;

/**
 * Formats that write each attempt of a test as an element of its own (TestNG's `retried`, cucumber --retry): a
 * test met again in the run is another attempt of it. In the others, a retry stays inside its test's element
 * (Surefire's rerun elements, CTRF's `retries`), and two elements of one suite and name are two tests.
 */
const ATTEMPT_FORMATS: ReadonlySet<ReportFormat> = new Set(['testng', 'cucumber']);

/**
 * Server-side report import: the upload streams through unpacking (.zip, .gz) and the streaming parser of its
 * format into the results writer in batches, inside one transaction: all of it is stored as one finished run,
 * or none of it. Tests get the same identity (suite + name), history and flakiness as through V1 and V2.
 */
@Injectable()
export class ImportService {
  private readonly limits: UploadLimits;

  constructor(
    private readonly access: ProjectAccessService,
    private readonly results: ResultsService,
    private readonly config: AppConfig,
    private readonly events: EventEmitter2,
    private readonly slots: ImportSlots,
  ) {
    this.limits = {
      maxBytes: config.import.maxBytes,
      maxEntries: MAX_ZIP_ENTRIES,
      spoolDir: config.import.spoolDir,
    };
  }

  async import(
    user: AuthUser,
    format: string,
    query: ImportQueryDto,
    req: Request,
  ): Promise<ImportResultDto> {
    if (!(IMPORT_FORMATS as readonly string[]).includes(format)) {
      throw AppError.validation(`format must be one of: ${IMPORT_FORMATS.join(', ')}`);
    }
    await this.access.require(user, query.projectId, 'REPORTER');
    this.checkUpload(req);
    const release = await this.slots.acquire(user.id);
    try {
      return await this.importUpload(format, query, req);
    } finally {
      // Success, a refusal, or a client that went away (reading its body fails): the slot is free again.
      await release();
    }
  }

  private async importUpload(format: string, query: ImportQueryDto, req: Request): Promise<ImportResultDto> {
    const warnings: string[] = [];
    const formats = new Set<ReportFormat>();
    let firstName: string | undefined;
    const startedAt = new Date();
    const span = new ReportSpan();
    const { run, warnings: written } = await this.results.writeWholeRun(
      query.projectId,
      {
        name: () =>
          query.runName ??
          `${oneLine(firstName ?? 'report')
            .toWellFormed()
            .slice(0, 200)} ${startedAt.toISOString()}`,
        attributes: {
          ...query.attributes,
          ...(query.branch ? { branch: query.branch } : {}),
          ...(query.commit ? { commit: query.commit } : {}),
          ...(query.env ? { env: query.env } : {}),
        },
        times: () => span.times(),
        stream: query.stream?.trim(),
      },
      async (add) => {
        let counts: RunCounts | undefined;
        const heap = new HeapTrim();
        const write = async (batch: ParsedResult[], format: ReportFormat) => {
          span.add(batch);
          counts = await add(batch, !ATTEMPT_FORMATS.has(format));
          heap.step();
        };
        try {
          for await (const source of reportSources(req, this.limits)) {
            firstName ??= source.name;
            const read = await this.readSource(source, format, warnings, write);
            if (read) {
              formats.add(read);
            }
          }
        } catch (error) {
          throw asHttpError(error, firstName ?? 'report');
        }
        if (!counts?.total) {
          throw AppError.unprocessable(
            formats.size
              ? 'The report holds no test results: nothing was imported'
              : 'The upload holds no report of a known format: nothing was imported',
          );
        }
      },
    );
    warnings.push(...written);
    const body: ImportResultDto = {
      runId: run.id,
      format: formats.size === 1 ? [...formats][0] : 'mixed',
      counts: run.counts,
      warnings,
    };
    this.events.emit(RESULTS_EVENT, {
      projectId: query.projectId,
      event: 'import.completed',
      runId: String(run.id),
      data: { format: body.format, counts: body.counts, warnings: warnings.length },
    } satisfies ResultsEvent);
    return body;
  }

  /** Refuses what can be refused before reading a byte: a declared size over the limit, a type not taken. */
  private checkUpload(req: Request): void {
    const declared = Number(req.headers['content-length']);
    if (declared > this.config.import.maxBytes) {
      throw AppError.payloadTooLarge(
        `The upload of ${declared} bytes exceeds the import limit of ${this.config.import.maxBytes} bytes (SVC_IMPORT_MAX_BYTES)`,
      );
    }
    if (!req.headers['content-type'] || !(req.is('multipart/form-data') || req.is(RAW_TYPES))) {
      throw new AppError(
        ErrorCode.UNSUPPORTED_MEDIA_TYPE,
        `Send the report as multipart/form-data (field "file") or as the raw body with one of: ${RAW_TYPES.join(', ')}`,
      );
    }
  }

  /**
   * Parses one report into the run; its format is the one named, or the one detected with `auto`. A zip member
   * of another format (or of none) is skipped with a warning; a file uploaded as such is refused with 400 saying
   * what it looks like. Returns the format read, or undefined when skipped.
   */
  private async readSource(
    source: ReportSource,
    named: string,
    warnings: string[],
    onResults: (batch: ParsedResult[], format: ReportFormat) => Promise<void>,
  ): Promise<ReportFormat | undefined> {
    const { head, all: chunks } = await peek(source.chunks, DETECT_HEAD_BYTES);
    const detected = detectFormat(head);
    const format = named === 'auto' ? detected : isReportFormat(named) ? named : undefined;
    // A file uploaded as such that detection does not recognise is left to the named parser, which says what is
    // wrong with it (line and column); a zip member has to be recognisably of the format.
    const mismatch = named !== 'auto' && (detected !== undefined || source.inArchive) && detected !== named;
    if (!format || mismatch) {
      const what = detected ? `a ${detected} report` : 'no report of a known format';
      if (source.inArchive) {
        warnings.push(`${source.name}: skipped, it is ${what}${named === 'auto' ? '' : `, not ${named}`}`);
        source.skip();
        return undefined;
      }
      throw AppError.validation(
        detected
          ? `${source.name} looks like a ${detected} report, not ${named}: import it as ${detected} or auto`
          : `${source.name} is no report of a known format (${REPORT_FORMATS.join(', ')})`,
      );
    }
    try {
      const outcome = await parseReport(format, chunks, (batch) => onResults(batch, format));
      warnings.push(...outcome.warnings.map((w) => (source.inArchive ? `${source.name}: ${w}` : w)));
      return format;
    } catch (error) {
      throw error instanceof ReportError ? asHttpError(error, source.name) : error;
    }
  }
}

/** A report parser's error as the API answers it: 400 for what is not well-formed, 413 past a limit. */
function asHttpError(error: unknown, name: string): unknown {
  if (error instanceof ReportError) {
    const message = `${name}: ${error.message}`;
    return error.kind === 'LIMIT' ? AppError.payloadTooLarge(message) : AppError.validation(message);
  }
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && code.startsWith('Z_')) {
    return AppError.validation(`${name}: the compressed data is not valid (${(error as Error).message})`);
  }
  return error;
}

/**
 * When the report's tests ran, for its run's startedAt and finishedAt (not the time of the import): from the
 * earliest start to the latest end, where the report has times; results that share a start time (a JUnit suite's
 * timestamp) ran one after the other, so their group ends after the sum of their durations. Without any time, the
 * run lasted the sum of its results' durations (its suites' time), from when the import began.
 * Holds only the group being read: the results of a report come suite by suite.
 */
export class ReportSpan {
  private first: number | undefined;
  private last: number | undefined;
  private groupStart: number | undefined;
  private groupEnd = 0;
  private total = 0;

  add(results: readonly { startedAt?: string; durationMs?: number }[]): void {
    for (const r of results) {
      const duration = r.durationMs ?? 0;
      this.total += duration;
      const start = r.startedAt ? Date.parse(r.startedAt) : NaN;
      if (Number.isNaN(start)) {
        continue;
      }
      if (start !== this.groupStart) {
        this.groupStart = start;
        this.groupEnd = start;
      }
      this.groupEnd += duration;
      this.first = this.first === undefined ? start : Math.min(this.first, start);
      this.last = this.last === undefined ? this.groupEnd : Math.max(this.last, this.groupEnd);
    }
  }

  /** The run's times; `now` the start of a report without any. */
  times(now = new Date()): { startedAt: Date; finishedAt: Date } {
    if (this.first !== undefined && this.last !== undefined) {
      return { startedAt: new Date(this.first), finishedAt: new Date(this.last) };
    }
    return { startedAt: now, finishedAt: new Date(now.getTime() + this.total) };
  }
}
