import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform, Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  IsUUID,
  Max,
  Min,
  Matches,
  MinLength,
  Validate,
  ValidateNested,
  ValidationArguments,
  ValidatorConstraint,
  ValidatorConstraintInterface,
} from 'class-validator';
import { PageQueryDto } from '../../common/paging/page-query.dto.js';
import { distinctList, MAX_LIST_VALUES } from '../../common/query-list.js';
import { RESULT_STATUSES } from '../entities.js';
import type { ResultStatus, RunStatus } from '../entities.js';
import {
  IsStorableText,
  IsTimestamp,
  MaxChars,
  NoFormatCharacters,
  STORABLE_TEXT_HINT,
  isStorableText,
} from '../../common/formats.js';
import { streamProblem } from '../../common/project-settings.js';
import { IssueLinkDto } from '../../triage/dto/failure.dto.js';

@ValidatorConstraint({ name: 'attributes' })
export class IsAttributes implements ValidatorConstraintInterface {
  validate(value: unknown): boolean {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      return false;
    }
    const entries = Object.entries(value);
    return (
      entries.length <= 50 &&
      entries.every(
        ([k, v]) =>
          k.length >= 1 && k.length <= 100 && isStorableText(k) && isStorableText(v) && v.length <= 1000,
      )
    );
  }
  defaultMessage(): string {
    return `$property must be an object of at most 50 string values (keys up to 100, values up to 1000 characters) that ${STORABLE_TEXT_HINT.replace('must', 'do')}`;
  }
}

@ValidatorConstraint({ name: 'stream' })
export class IsStream implements ValidatorConstraintInterface {
  validate(value: unknown): boolean {
    return streamProblem(value) === undefined;
  }
  defaultMessage(args: ValidationArguments): string {
    return `${args.property} ${streamProblem(args.value)}`;
  }
}

export class CreateRunDto {
  @ApiProperty({
    example: 'nightly #512',
    description: 'Trimmed; must hold more than spaces, and no invisible formatting characters',
    maxLength: 500,
  })
  @IsString()
  @Matches(/\S/, { message: 'name must not be blank' })
  @MaxChars(500)
  @IsStorableText()
  @NoFormatCharacters()
  name: string;

  @ApiPropertyOptional({ example: '2026-11-22T10:15:00.000Z' })
  @IsOptional()
  @IsTimestamp()
  startedAt?: string;

  @ApiPropertyOptional({
    example: { branch: 'main', commit: '4f2a9c1' },
    type: 'object',
    additionalProperties: { type: 'string' },
  })
  @IsOptional()
  @Type(() => Object)
  @Transform(({ obj }: { obj: { attributes?: unknown } }) => ownEntries(obj.attributes))
  @Validate(IsAttributes)
  attributes?: Record<string, string>;

  @ApiPropertyOptional({
    example: 'nightly · main',
    maxLength: 200,
    description:
      'The stream: runs compared with each other. Default: the name without a trailing build number or id, then the values of the attributes named in the project settings streams.attributes',
  })
  @IsOptional()
  @Validate(IsStream)
  stream?: string;
}

/**
 * A free-form map as sent, every key kept: class-transformer's own copy leaves out keys named like members of
 * Object.prototype (`toString`, `constructor`, `__proto__`), so `{"toString": "x"}` was stored as `{}`. The copy
 * has no prototype, so no key can reach one. Anything but a plain object is left for the validator to refuse.
 */
export function ownEntries(value: unknown): unknown {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return value;
  }
  const copy = Object.create(null) as Record<string, unknown>;
  for (const key of Object.keys(value)) {
    copy[key] = (value as Record<string, unknown>)[key];
  }
  return copy;
}

export class FinishRunDto {
  @ApiPropertyOptional({ example: '2026-11-22T10:45:00.000Z' })
  @IsOptional()
  @IsTimestamp()
  finishedAt?: string;
}

export class ResultItemDto {
  @ApiPropertyOptional({
    description: 'Client-supplied id (RFC 4122); a result with a known UUID is not stored twice',
  })
  @IsOptional()
  @IsUUID('all', { message: 'uuid must be a UUID' })
  uuid?: string;

  @ApiPropertyOptional({ description: 'Explicit stable test id; otherwise suite + name identify the test' })
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxChars(500)
  @IsStorableText()
  testId?: string;

  @ApiProperty({ example: 'logs in with a valid password' })
  @IsString()
  @Matches(/\S/, { message: 'name must not be blank' })
  @MaxChars(1000)
  @IsStorableText()
  name: string;

  @ApiPropertyOptional({ example: 'LoginTest' })
  @IsOptional()
  @IsString()
  @MaxChars(1000)
  @IsStorableText()
  suite?: string;

  @ApiProperty({ enum: RESULT_STATUSES })
  @IsIn(RESULT_STATUSES, { message: `status must be one of: ${RESULT_STATUSES.join(', ')}` })
  status: ResultStatus;

  @ApiPropertyOptional({ example: 1234 })
  @IsOptional()
  @IsInt({ message: 'durationMs must be a whole number' })
  @Min(0)
  @Max(31_536_000_000)
  durationMs?: number;

  @ApiPropertyOptional()
  @IsOptional()
  @IsString()
  @MaxChars(65_536)
  @IsStorableText()
  message?: string;

  @ApiPropertyOptional()
  @IsOptional()
  @IsString()
  @MaxChars(1_048_576)
  @IsStorableText()
  trace?: string;

  @ApiPropertyOptional()
  @IsOptional()
  @IsTimestamp()
  startedAt?: string;

  @ApiPropertyOptional({ type: 'object', additionalProperties: { type: 'string' } })
  @IsOptional()
  @Validate(IsAttributes)
  attributes?: Record<string, string>;

  // No `default` in the schema: generated clients read a property with one as always present, and make it required.
  @ApiPropertyOptional({
    description: 'Retry number: 0 (the first attempt) when left out',
    minimum: 0,
    maximum: 1000,
  })
  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(1000)
  retry?: number;
}

export class AddResultsDto {
  @ApiProperty({ type: [ResultItemDto], description: 'At most 1000; all or nothing' })
  @IsArray()
  @ArrayMinSize(1, { message: 'results must hold at least one result' })
  @ArrayMaxSize(1000, { message: 'results must hold at most 1000 results' })
  @ValidateNested({ each: true })
  @Type(() => ResultItemDto)
  results: ResultItemDto[];
}

export class ResultIdsDto {
  @ApiProperty({ type: [Number], description: 'In input order' })
  ids: number[];
}

export class RunCountsDto {
  @ApiProperty({ description: 'Tests that ran: their outcomes (the last attempt of each test)' })
  total: number;
  @ApiProperty({ description: 'Outcomes PASSED' }) passed: number;
  @ApiProperty({ description: 'Outcomes FAILED' }) failed: number;
  @ApiProperty({ description: 'Outcomes BROKEN' }) broken: number;
  @ApiProperty({ description: 'Outcomes SKIPPED' }) skipped: number;
  @ApiProperty({
    description: 'Outcomes PASSED after an earlier FAILED or BROKEN attempt (counted in passed too)',
  })
  passedOnRetry: number;
  @ApiProperty({ description: 'Every result stored, all attempts' }) attempts: number;
}

export class RunGateSummaryDto {
  @ApiProperty({
    enum: ['PASSED', 'FAILED', 'PENDING', 'OFF'],
    description:
      'The quality gate of the run (GET /api/runs/{id}/gate for its conditions): PENDING while the run is in progress ' +
      'and until its finish is evaluated; OFF when the project disabled the gate',
  })
  status: 'PASSED' | 'FAILED' | 'PENDING' | 'OFF';
}

export class RunDto {
  @ApiProperty() id: number;
  @ApiProperty() projectId: number;
  @ApiPropertyOptional({ type: String, nullable: true }) uuid: string | null;
  @ApiProperty() name: string;
  @ApiProperty({ enum: ['IN_PROGRESS', 'FINISHED'] }) status: RunStatus;
  @ApiProperty() startedAt: string;
  @ApiProperty({ type: String, nullable: true }) finishedAt: string | null;
  @ApiProperty({ type: 'object', additionalProperties: { type: 'string' } }) attributes: Record<
    string,
    string
  >;
  @ApiProperty({ example: 'nightly · main', description: 'The runs it is compared with (API.md, "Streams")' })
  stream: string;
  @ApiProperty({ type: RunCountsDto }) counts: RunCountsDto;
  @ApiProperty({
    type: Number,
    nullable: true,
    description:
      'Tests NEW_FAILURE against the run before in its stream, as compare counts them by default; stored when the run ' +
      'finishes. null while it is in progress, when it had no run before, and for runs finished before this field existed',
  })
  newFailures: number | null;
  @ApiProperty({ type: RunGateSummaryDto }) gate: RunGateSummaryDto;
  @ApiProperty({ description: 'Kept by the retention cleanup whatever its age (PUT/DELETE /api/runs/{id}/pin)' })
  pinned: boolean;
}

/** What a result and a history item share. */
/** A failing result's signature (API.md, "Failure triage across runs"). */
export class ResultFailureDto {
  @ApiProperty() signatureId: number;
  @ApiProperty({ description: 'The signature was first seen in this run' }) isNew: boolean;
  @ApiProperty({ enum: ['TO_INVESTIGATE', 'PRODUCT_BUG', 'AUTOMATION_BUG', 'SYSTEM_ISSUE', 'NO_DEFECT'] })
  triage: string;
  @ApiProperty({ type: IssueLinkDto, nullable: true }) issue: IssueLinkDto | null;
}

export class ResultFieldsDto {
  @ApiProperty() id: number;
  @ApiProperty() runId: number;
  @ApiProperty() testId: number;
  @ApiPropertyOptional({ type: String, nullable: true }) uuid: string | null;
  @ApiProperty() name: string;
  @ApiProperty() suite: string;
  @ApiProperty({ enum: RESULT_STATUSES }) status: ResultStatus;
  @ApiProperty({ type: Number, nullable: true }) durationMs: number | null;
  @ApiProperty({ type: String, nullable: true }) message: string | null;
  @ApiProperty({ type: String, nullable: true }) trace: string | null;
  @ApiProperty({ type: String, nullable: true }) startedAt: string | null;
  @ApiProperty({ type: 'object', additionalProperties: { type: 'string' } }) attributes: Record<
    string,
    string
  >;
  @ApiProperty() retry: number;
  @ApiPropertyOptional({
    type: ResultFailureDto,
    nullable: true,
    description: 'FAILED and BROKEN results only: their failure signature (null when it has none)',
  })
  failure?: ResultFailureDto | null;
}

export class ResultDto extends ResultFieldsDto {
  @ApiProperty({
    description:
      "Whether this is its test's outcome in the run (its last attempt); false only with attempts=all",
  })
  outcome: boolean;
  @ApiProperty({
    type: Number,
    nullable: true,
    description:
      "On an outcome, the test's number of attempts in the run; null on an earlier attempt (attempts=all)",
  })
  attempts: number | null;
  @ApiProperty({
    description:
      'An outcome that PASSED after an earlier attempt of its test FAILED or BROKE (counted in passedOnRetry)',
  })
  passedOnRetry: boolean;
}

/** One attempt of a test in a run, as a history item lists them: with its message and trace. */
export class HistoryAttemptDto {
  @ApiProperty() id: number;
  @ApiProperty({ enum: RESULT_STATUSES }) status: ResultStatus;
  @ApiProperty({ type: Number, nullable: true }) durationMs: number | null;
  @ApiProperty({ type: String, nullable: true }) message: string | null;
  @ApiProperty({ type: String, nullable: true }) trace: string | null;
  @ApiProperty() retry: number;
  @ApiProperty({ type: String, nullable: true }) startedAt: string | null;
}

/** One attempt of a test in a run (a result, without its texts). */
export class AttemptDto {
  @ApiProperty() id: number;
  @ApiProperty({ enum: RESULT_STATUSES }) status: ResultStatus;
  @ApiProperty() retry: number;
  @ApiProperty({ type: Number, nullable: true }) durationMs: number | null;
  @ApiProperty({ type: String, nullable: true }) startedAt: string | null;
}

export class ResultDetailDto extends ResultFieldsDto {
  @ApiProperty({ description: "Whether this is its test's outcome in the run (its last attempt)" })
  outcome: boolean;

  @ApiProperty({
    type: [AttemptDto],
    description:
      'Every result of its test in this run, itself among them, by retry, then start, then arrival (at most 100)',
  })
  attempts: AttemptDto[];
}

/** A test's outcome in one run (its last attempt), with the run's name and every attempt, first to last. */
export class HistoryItemDto extends ResultFieldsDto {
  @ApiProperty() runName: string;
  @ApiProperty({
    type: [HistoryAttemptDto],
    description: 'Every attempt of the test in the run, first to last (the outcome last)',
  })
  attempts: HistoryAttemptDto[];
}

export const TEST_STATES = ['HEALTHY', 'FAILING', 'FLAKY', 'QUARANTINED'] as const;

/** A test's quarantine (API.md, "Test health"): it still runs, but stops counting against the quality gate. */
export class QuarantineDto {
  @ApiProperty({ example: '2026-11-22T10:15:00.000Z' }) since: string;
  @ApiProperty({ example: 'Fails on the shared staging database' }) reason: string;
  @ApiProperty({ description: 'Quarantined automatically (flaky with `flaky.autoQuarantine` on)' }) auto: boolean;
  @ApiProperty({ type: Number, nullable: true, description: 'Who quarantined it; null when automatic' })
  byUserId: number | null;
  @ApiProperty({
    type: String,
    nullable: true,
    description: 'When it ends by itself; null: until released (or, when automatic, until it passes enough runs)',
  })
  until: string | null;
}

export class TestCaseDto {
  @ApiProperty() id: number;
  @ApiProperty() suite: string;
  @ApiProperty() name: string;
  @ApiProperty({ enum: RESULT_STATUSES, nullable: true }) lastStatus: ResultStatus | null;
  @ApiProperty({
    description:
      'Flaky over its window (settings `flaky`): failed and passed in one run, or on one commit, or flips at least `flipRate` of its runs',
  })
  flaky: boolean;
  @ApiProperty({
    type: Number,
    nullable: true,
    example: 0.25,
    description: 'Flips ÷ (runs − 1) over the window (PASSED ↔ FAILED/BROKEN between consecutive runs of a stream); null until it ran twice',
  })
  flakeRate: number | null;
  @ApiProperty({ example: 12, description: 'Runs of its window in which it ran (a run where it was only skipped does not count)' })
  runs: number;
  @ApiProperty({ example: '2026-11-01T08:00:00.000Z' }) firstSeenAt: string;
  @ApiProperty({ type: String, nullable: true, description: 'Start of the last run in which an attempt of it failed' })
  lastFailedAt: string | null;
  @ApiProperty({ type: QuarantineDto, nullable: true }) quarantine: QuarantineDto | null;
  @ApiProperty({
    enum: TEST_STATES,
    description: 'QUARANTINED when quarantined, else FLAKY when flaky, else FAILING when its last status failed, else HEALTHY',
  })
  state: (typeof TEST_STATES)[number];
}

export class ResultsQueryDto extends PageQueryDto {
  @ApiPropertyOptional({
    type: [String],
    enum: RESULT_STATUSES,
    description: `Only results of these statuses: repeatable, or comma-separated (\`FAILED,BROKEN\` for all failures); each counts once, at most ${MAX_LIST_VALUES} values`,
  })
  @IsOptional()
  @Transform(distinctList('status'))
  @IsIn(RESULT_STATUSES, { each: true, message: `status must be one of: ${RESULT_STATUSES.join(', ')}` })
  status?: ResultStatus[];

  @ApiPropertyOptional({
    description: 'Only results of this suite (exact; an empty value is the results without one)',
  })
  @IsOptional()
  @IsString()
  @MaxChars(1000)
  @IsStorableText()
  suite?: string;

  @ApiPropertyOptional({ description: 'Substring of the name, case-insensitive' })
  @IsOptional()
  @IsString()
  @MaxChars(200)
  @IsStorableText()
  q?: string;

  @ApiPropertyOptional({
    enum: ['all'],
    description:
      '`all`: every attempt of each test; by default one result a test, its outcome (its last attempt), with `attempts`',
  })
  @IsOptional()
  @IsIn(['all'], { message: 'attempts must be all (or left out for one result a test)' })
  attempts?: 'all';

  @ApiPropertyOptional({
    description:
      'Only the failures of this failure group (its `key` in GET /api/runs/{runId}/failure-groups)',
  })
  @IsOptional()
  @IsString()
  @MaxChars(600)
  @IsStorableText()
  group?: string;
}

export class RunsQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ enum: ['IN_PROGRESS', 'FINISHED'] })
  @IsOptional()
  @IsIn(['IN_PROGRESS', 'FINISHED'], { message: 'status must be one of: IN_PROGRESS, FINISHED' })
  status?: RunStatus;

  @ApiPropertyOptional({ description: 'Substring of the name, case-insensitive' })
  @IsOptional()
  @IsString()
  @MaxChars(200)
  @IsStorableText()
  q?: string;

  @ApiPropertyOptional({ description: 'Only the runs of this stream (exact; an unknown one: an empty page)' })
  @IsOptional()
  @Validate(IsStream)
  stream?: string;
}

export class TestsQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ description: 'Substring of the suite or name, case-insensitive' })
  @IsOptional()
  @IsString()
  @MaxChars(200)
  @IsStorableText()
  q?: string;

  @ApiPropertyOptional({
    type: [String],
    enum: TEST_STATES,
    description: 'Only tests in these states: comma-separated or repeated (`FLAKY,QUARANTINED`); an unknown one is a 400 naming it',
  })
  @IsOptional()
  @Transform(distinctList('state'))
  state?: string[];

  @ApiPropertyOptional({
    description:
      'The `nextCursor` of the previous page (same `sort`, `q`, `state`): the next page, read from where that one ended, as fast however deep. Not with `page`; only with sorts on suite, name, id.',
  })
  @IsOptional()
  @IsString({ message: 'cursor must be a single string' })
  @MaxChars(16_000)
  cursor?: string;
}

export class TestCasePageDto {
  @ApiProperty({ type: [TestCaseDto] }) content: TestCaseDto[];
  @ApiProperty({ example: 0 }) page: number;
  @ApiProperty({ example: 20 }) size: number;
  @ApiProperty({ example: 153, description: 'With a cursor: as counted for the first page of the list' })
  totalElements: number;
  @ApiProperty({ example: 8 }) totalPages: number;
  @ApiProperty({
    type: String,
    nullable: true,
    description:
      'Pass as `cursor` (with the same `sort`, `q`, `size`) for the next page; null on the last page',
  })
  nextCursor: string | null;
}
