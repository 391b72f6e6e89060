import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional, IsString, Matches, MinLength, ValidateIf } from 'class-validator';
import { Transform } from 'class-transformer';
import { IsStorableText, MaxChars, NoFormatCharacters } from '../../common/formats.js';
import { NO_CONTROL_CHARS, NO_CONTROL_CHARS_BUT_LINES } from '../../common/text.js';
import { PageQueryDto } from '../../common/paging/page-query.dto.js';
import { RunCountsDto } from '../../results/dto/results.dto.js';
import { PROJECT_ROLES } from '../roles.js';
import type { ProjectRole } from '../roles.js';

/** A project's key: 2-32 of A-Z, 0-9 and _. */
export const PROJECT_KEY = /^[A-Z0-9_]{2,32}$/;

/** Names are stored trimmed, so the checks see what will be stored: "   " is blank, not a name of 3 spaces. */
const trimmed = ({ value }: { value: unknown }): unknown =>
  typeof value === 'string' ? value.trim() : value;

export class CreateProjectDto {
  @ApiProperty({ example: 'WEB_APP', description: '2-32 of A-Z, 0-9 and _; unique' })
  @IsString()
  @Matches(PROJECT_KEY, { message: 'key must be 2-32 characters of A-Z, 0-9 and _' })
  key: string;

  @ApiProperty({
    example: 'Web application',
    description: 'One line, trimmed; must hold more than spaces',
    maxLength: 200,
  })
  @Transform(trimmed)
  @IsString()
  @MinLength(1, { message: 'name must not be blank' })
  @MaxChars(200)
  @Matches(NO_CONTROL_CHARS, { message: 'name must be one line without control characters' })
  @IsStorableText()
  @NoFormatCharacters()
  name: string;

  @ApiPropertyOptional({
    example: 'End-to-end and unit tests of the web application',
    description: 'May span lines',
    maxLength: 2000,
  })
  @IsOptional()
  @IsString()
  @MaxChars(2000)
  @Matches(NO_CONTROL_CHARS_BUT_LINES, {
    message: 'description must not contain control characters other than line breaks and tabs',
  })
  @IsStorableText()
  description?: string;
}

/** The project list's query: a page, and `key` to find one project by its key (what the `tms` client sends). */
export class ProjectsQueryDto extends PageQueryDto {
  @ApiPropertyOptional({
    example: 'WEB_APP',
    description:
      'Only the project with this key (exact): a page of that one project, or an empty page when the caller cannot see it',
  })
  @IsOptional()
  @IsString()
  @Matches(PROJECT_KEY, { message: 'key must be 2-32 characters of A-Z, 0-9 and _' })
  key?: string;
}

export class UpdateProjectDto {
  @ApiPropertyOptional()
  // Optional, but not nullable: a project always has a name (description: null clears the description).
  @ValidateIf((_: unknown, value: unknown) => value !== undefined)
  @Transform(trimmed)
  @IsString()
  @MinLength(1, { message: 'name must not be blank' })
  @MaxChars(200)
  @Matches(NO_CONTROL_CHARS, { message: 'name must be one line without control characters' })
  @IsStorableText()
  @NoFormatCharacters()
  name?: string;

  @ApiPropertyOptional({ nullable: true })
  @IsOptional()
  @IsString()
  @MaxChars(2000)
  @Matches(NO_CONTROL_CHARS_BUT_LINES, {
    message: 'description must not contain control characters other than line breaks and tabs',
  })
  @IsStorableText()
  description?: string;
}

export class LatestRunDto {
  @ApiProperty() id: number;
  @ApiProperty() name: string;
  @ApiProperty({ enum: ['IN_PROGRESS', 'FINISHED'] }) status: 'IN_PROGRESS' | 'FINISHED';
  @ApiProperty({ example: 'nightly · main' }) stream: string;
  @ApiProperty() startedAt: string;
  @ApiProperty({ type: String, nullable: true }) finishedAt: string | null;
  @ApiProperty({ type: RunCountsDto }) counts: RunCountsDto;
  @ApiProperty({
    type: Number,
    nullable: true,
    description: 'passed ÷ (passed + failed + broken), 0..1; null when none of them',
  })
  passRate: number | null;
}

export class ProjectDto {
  @ApiProperty({ example: 7 })
  id: number;

  @ApiProperty({ example: 'WEB_APP' })
  key: string;

  @ApiProperty({ example: 'Web application' })
  name: string;

  @ApiProperty({ type: String, nullable: true })
  description: string | null;

  @ApiProperty({ enum: PROJECT_ROLES, description: "The caller's effective role in the project" })
  role: ProjectRole;

  @ApiProperty({ example: '2026-11-22T10:15:00.000Z' })
  createdAt: string;

  @ApiProperty({ example: '2026-11-22T10:15:00.000Z' })
  updatedAt: string;

  @ApiProperty({
    type: LatestRunDto,
    nullable: true,
    description:
      'The latest finished run of its default stream (settings streams.default; unset: the stream with the most runs in the last 30 days), null before there is one',
  })
  latestRun: LatestRunDto | null;
}

export class SetMemberRoleDto {
  @ApiProperty({ enum: PROJECT_ROLES })
  @IsIn(PROJECT_ROLES, { message: `role must be one of: ${PROJECT_ROLES.join(', ')}` })
  role: ProjectRole;
}

export class ProjectMemberDto {
  @ApiProperty({ example: 3 })
  userId: number;

  @ApiProperty({ example: 'ada@example.com' })
  email: string;

  @ApiProperty({ example: 'Ada Lovelace' })
  fullName: string;

  @ApiProperty({ enum: PROJECT_ROLES, description: 'Effective role: the highest of direct and group roles' })
  role: ProjectRole;

  @ApiProperty({ enum: ['DIRECT', 'GROUP'], description: 'Where the role comes from' })
  via: 'DIRECT' | 'GROUP';

  @ApiProperty({
    description:
      'A platform administrator: acts as OWNER in every project whatever role this row shows (role and via are the membership)',
  })
  platformAdmin: boolean;
}
