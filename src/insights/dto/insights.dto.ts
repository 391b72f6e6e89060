import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsIn, IsInt, IsOptional, Matches, Max, Min, Validate } from 'class-validator';
import { LatestRunDto } from '../../access/dto/project.dto.js';
import { PageQueryDto } from '../../common/paging/page-query.dto.js';
import { distinctList, MAX_LIST_VALUES } from '../../common/query-list.js';
import { RESULT_STATUSES } from '../../results/entities.js';
import type { ResultStatus } from '../../results/entities.js';
import { IsStream, RunCountsDto, RunDto } from '../../results/dto/results.dto.js';
import { CHANGES } from '../insights.repository.js';
import type { Change } from '../insights.repository.js';

function toInt({ value }: { value: unknown }): unknown {
  return typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value;
}

export class FailureGroupDto {
  @ApiProperty({
    example: 'Connection refused: localhost:<n> after <n> ms',
    description:
      'The failure signature: the normalised message (numbers, ids, times and temporary paths stripped) and the first own trace frame; pass it as `group` to GET /api/runs/{runId}/results',
  })
  key: string;
  @ApiProperty({ description: 'Failed and broken results in the group' }) count: number;
  @ApiProperty() failed: number;
  @ApiProperty() broken: number;
  @ApiProperty({ description: 'Distinct tests in the group (retries count once)' }) tests: number;
  @ApiProperty({ type: String, nullable: true, description: 'One message of the group as it was sent' })
  example: string | null;
  @ApiProperty({ description: 'Its failure signature (GET /api/failures/{id})' }) signatureId: number;
  @ApiProperty({ description: 'The signature was first seen in this run' }) isNew: boolean;
  @ApiProperty({ enum: ['TO_INVESTIGATE', 'PRODUCT_BUG', 'AUTOMATION_BUG', 'SYSTEM_ISSUE', 'NO_DEFECT'] })
  triage: string;
  @ApiProperty({
    type: 'object',
    nullable: true,
    properties: { url: { type: 'string' }, key: { type: 'string' }, title: { type: 'string' } },
    required: ['url'],
  })
  issue: { url: string; key?: string; title?: string } | null;
}

export class SuiteDto {
  @ApiProperty({ description: 'Empty for results sent without a suite' }) suite: string;
  @ApiProperty() total: number;
  @ApiProperty({ description: 'Failed and broken results' }) failed: number;
}

export class CompareQueryDto {
  @ApiPropertyOptional({
    description: 'The run to compare with (same project); default: the run started last before this one',
  })
  @IsOptional()
  @Matches(/^\d{1,18}$/, { message: 'base must be a run id' })
  base?: string;
}

export class CompareTestsQueryDto extends PageQueryDto {
  @ApiPropertyOptional({
    description: 'The run to compare with (same project); default: the run started last before this one',
  })
  @IsOptional()
  @Matches(/^\d{1,18}$/, { message: 'base must be a run id' })
  base?: string;

  @ApiPropertyOptional({
    type: [String],
    enum: CHANGES,
    description: `Only tests that changed in these ways: repeatable or comma-separated, each counting once, at most ${MAX_LIST_VALUES} values; default: every way but UNCHANGED`,
  })
  @IsOptional()
  @Transform(distinctList('change'))
  @IsIn(CHANGES, { each: true, message: `change must be one of: ${CHANGES.join(', ')}` })
  change?: Change[];
}

export class ChangeCountsDto {
  @ApiProperty({ description: 'Failing now, passed or skipped in the base run' }) newFailures: number;
  @ApiProperty({ description: 'Failing in the base run, passed or skipped now' }) fixed: number;
  @ApiProperty({ description: 'Failing in both' }) stillFailing: number;
  @ApiProperty({
    description:
      'Passed and failed within either run (a retry passed), or, when both runs are of one `commit`, across the two',
  })
  flaky: number;
  @ApiProperty({ description: 'Only in this run' }) added: number;
  @ApiProperty({ description: 'Only in the base run' }) removed: number;
  @ApiProperty({ description: 'Same outcome in both' }) unchanged: number;
}

export class ComparisonDto {
  @ApiProperty({ type: RunDto }) head: RunDto;
  @ApiProperty({
    type: RunDto,
    nullable: true,
    description: 'Null when the run is its project’s first: every test is then added',
  })
  base: RunDto | null;
  @ApiProperty({
    description: 'Both runs carry the same `commit` attribute: a flipped outcome counts as flaky',
  })
  sameRevision: boolean;
  @ApiProperty({ type: ChangeCountsDto }) summary: ChangeCountsDto;
}

export class TestChangeDto {
  @ApiProperty() testId: number;
  @ApiProperty() suite: string;
  @ApiProperty() name: string;
  @ApiProperty({ enum: CHANGES }) change: Change;
  @ApiProperty({ enum: RESULT_STATUSES, nullable: true, description: 'Its last attempt in the base run' })
  baseStatus: ResultStatus | null;
  @ApiProperty({ enum: RESULT_STATUSES, nullable: true, description: 'Its last attempt in this run' })
  headStatus: ResultStatus | null;
  @ApiProperty({
    type: String,
    nullable: true,
    description: 'The message of that attempt (of the base run’s, when removed)',
  })
  message: string | null;
}

export class TrendQueryDto {
  @ApiPropertyOptional({ description: 'How many of the latest runs', default: 30, minimum: 1, maximum: 200 })
  @IsOptional()
  @Transform(toInt)
  @IsInt({ message: 'runs must be a whole number' })
  @Min(1, { message: 'runs must be between 1 and 200' })
  @Max(200, { message: 'runs must be between 1 and 200' })
  runs?: number;

  @ApiPropertyOptional({
    description: 'Only this stream\'s runs (API.md, "Streams"); all the project\'s by default',
  })
  @IsOptional()
  @Validate(IsStream)
  stream?: string;
}

export class StreamDto {
  @ApiProperty({ example: 'nightly · main' }) stream: string;
  @ApiProperty({ description: 'Runs of the stream' }) runs: number;
  @ApiProperty({ type: () => LatestRunDto, description: 'Its run started last' }) latestRun: LatestRunDto;
}

export class TrendPointDto {
  @ApiProperty() runId: number;
  @ApiProperty() name: string;
  @ApiProperty({ enum: ['IN_PROGRESS', 'FINISHED'] }) status: 'IN_PROGRESS' | 'FINISHED';
  @ApiProperty() stream: string;
  @ApiProperty() startedAt: string;
  @ApiProperty({ type: Number, nullable: true, description: 'From start to finish; null while in progress' })
  durationMs: number | null;
  @ApiProperty({ type: RunCountsDto }) counts: RunCountsDto;
  @ApiProperty({
    type: Number,
    nullable: true,
    description: 'passed ÷ (passed + failed + broken), 0..1; null when none of them',
  })
  passRate: number | null;
}

export class TrendDto {
  @ApiProperty({ type: [TrendPointDto], description: 'Oldest first' }) points: TrendPointDto[];
}
