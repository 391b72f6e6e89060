import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform, Type } from 'class-transformer';
import {
  IsIn,
  IsObject,
  IsOptional,
  IsString,
  Matches,
  MinLength,
  ValidateIf,
  ValidateNested,
} from 'class-validator';
import { PageQueryDto } from '../../common/paging/page-query.dto.js';
import { distinctList } from '../../common/query-list.js';
import { IsStorableText, MaxChars, OmittableNotNull } from '../../common/formats.js';

export const TRIAGES = [
  'TO_INVESTIGATE',
  'PRODUCT_BUG',
  'AUTOMATION_BUG',
  'SYSTEM_ISSUE',
  'NO_DEFECT',
] as const;
export type Triage = (typeof TRIAGES)[number];
export const MAX_NOTE_CHARS = 2000;

export class IssueLinkDto {
  @ApiProperty({ example: 'https://jira.example.com/browse/SHOP-123', description: 'http or https only' })
  @IsString({ message: 'issue.url must be a string' })
  @MaxChars(2000, { message: 'issue.url must be at most 2000 characters' })
  @IsStorableText()
  url: string;

  @ApiPropertyOptional({ example: 'SHOP-123' })
  @IsOptional()
  @IsString({ message: 'issue.key must be a string' })
  @MaxChars(100, { message: 'issue.key must be at most 100 characters' })
  @IsStorableText()
  key?: string;

  @ApiPropertyOptional({ example: 'Checkout times out on the payment step' })
  @IsOptional()
  @IsString({ message: 'issue.title must be a string' })
  @MaxChars(500, { message: 'issue.title must be at most 500 characters' })
  @IsStorableText()
  title?: string;
}

export class SeenDto {
  @ApiProperty() runId: number;
  @ApiProperty({ description: 'When that run started' }) at: string;
}

export class AssigneeDto {
  @ApiProperty() id: number;
  @ApiProperty() email: string;
  @ApiProperty({ type: String, nullable: true }) fullName: string | null;
}

export class SuggestionDto {
  @ApiProperty({ description: 'The triaged signature whose triage and issue this one took' }) fromId: number;
  @ApiProperty({ description: 'Trigram similarity of the two keys, 0..1' }) similarity: number;
}

export class FailureSignatureDto {
  @ApiProperty() id: number;
  @ApiProperty() projectId: number;
  @ApiProperty({
    example: 'Connection refused: db-<n>:<n> after <n> ms @ Pool.connect (pool.js)',
    description:
      'The message with numbers, ids, times and temporary paths stripped, and the first own trace frame',
  })
  key: string;
  @ApiProperty({
    type: String,
    nullable: true,
    description: 'The first message met, as sent (2000 characters)',
  })
  sampleMessage: string | null;
  @ApiProperty({ type: SeenDto }) firstSeen: SeenDto;
  @ApiProperty({ type: SeenDto }) lastSeen: SeenDto;
  @ApiProperty({ description: 'Failing results met with it (each failing attempt counts)' })
  occurrences: number;
  @ApiProperty({ description: 'Distinct tests' }) tests: number;
  @ApiProperty({ description: 'Distinct runs' }) runs: number;
  @ApiProperty({ enum: TRIAGES }) triage: Triage;
  @ApiProperty({ type: IssueLinkDto, nullable: true }) issue: IssueLinkDto | null;
  @ApiProperty({ type: String, nullable: true }) note: string | null;
  @ApiProperty({ type: AssigneeDto, nullable: true }) assignee: AssigneeDto | null;
  @ApiProperty({
    type: SuggestionDto,
    nullable: true,
    description:
      'Set when triage and issue were taken from a similar signature; null once someone changed it',
  })
  suggested: SuggestionDto | null;
}

export class RecentRunDto {
  @ApiProperty() runId: number;
  @ApiProperty() name: string;
  @ApiProperty({ description: 'When the run started' }) at: string;
  @ApiProperty({ description: 'Failing results of the run with this signature' }) count: number;
}

export class TopTestDto {
  @ApiProperty() testId: number;
  @ApiProperty() suite: string;
  @ApiProperty() name: string;
  @ApiProperty({ description: 'Failing results of the test with this signature' }) count: number;
}

export class FailureDetailDto extends FailureSignatureDto {
  @ApiProperty({ type: [RecentRunDto], description: 'The last 20 runs it appeared in, latest first' })
  recentRuns: RecentRunDto[];
  @ApiProperty({ type: [TopTestDto], description: 'The 50 tests it appeared in most' })
  topTests: TopTestDto[];
}

export class SimilarFailureDto {
  @ApiProperty({ type: FailureSignatureDto }) signature: FailureSignatureDto;
  @ApiProperty({ description: 'Trigram similarity of the keys, 0..1' }) similarity: number;
}

/** The signature of a failing result or of a run's failure group. */
export class FailureRefDto {
  @ApiProperty() signatureId: number;
  @ApiProperty({ description: 'First seen in this run' }) isNew: boolean;
  @ApiProperty({ enum: TRIAGES }) triage: Triage;
  @ApiProperty({ type: IssueLinkDto, nullable: true }) issue: IssueLinkDto | null;
}

export class FailuresQueryDto extends PageQueryDto {
  @ApiPropertyOptional({
    description:
      'Words (each must appear) or a fragment, matched case-insensitively in the message and the key',
  })
  @IsOptional()
  @IsString()
  @MaxChars(200, { message: 'q must be at most 200 characters' })
  @IsStorableText()
  q?: string;

  @ApiPropertyOptional({
    type: [String],
    enum: TRIAGES,
    description: 'Only these triages: repeatable or comma-separated',
  })
  @IsOptional()
  @Transform(distinctList('triage'))
  @IsIn(TRIAGES, { each: true, message: `triage must be one of: ${TRIAGES.join(', ')}` })
  triage?: Triage[];

  @ApiPropertyOptional({ description: '`me`, or a user id' })
  @IsOptional()
  @Matches(/^(me|\d{1,18})$/, { message: 'assignee must be me or a user id' })
  assignee?: string;

  @ApiPropertyOptional({
    enum: ['true'],
    description: "Only signatures first seen in the project's latest finished run (of its default stream)",
  })
  @IsOptional()
  @IsIn(['true', 'false'], { message: 'new must be true or false' })
  new?: 'true' | 'false';
}

export class PatchFailureDto {
  @ApiPropertyOptional({ enum: TRIAGES })
  @OmittableNotNull()
  @IsIn(TRIAGES, { message: `triage must be one of: ${TRIAGES.join(', ')}` })
  triage?: Triage;

  @ApiPropertyOptional({ type: IssueLinkDto, nullable: true, description: 'null removes the link' })
  @IsOptional()
  @ValidateIf((_, v) => v !== null)
  @IsObject({ message: 'issue must be an object {url, key?, title?} or null' })
  @ValidateNested()
  @Type(() => IssueLinkDto)
  issue?: IssueLinkDto | null;

  @ApiPropertyOptional({ type: String, nullable: true, maxLength: MAX_NOTE_CHARS })
  @IsOptional()
  @ValidateIf((_, v) => v !== null)
  @IsString({ message: 'note must be a string' })
  @MaxChars(MAX_NOTE_CHARS, { message: `note must be at most ${MAX_NOTE_CHARS} characters` })
  @IsStorableText()
  note?: string | null;

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    description: 'A user who can see the project; null: nobody',
  })
  @IsOptional()
  @ValidateIf((_, v) => v !== null)
  @Transform(({ value }: { value: unknown }) => (typeof value === 'number' ? String(value) : value))
  @IsString({ message: 'assigneeId must be a user id' })
  @Matches(/^\d{1,18}$/, { message: 'assigneeId must be a user id' })
  @MinLength(1)
  assigneeId?: string | null;
}
