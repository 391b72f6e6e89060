import { Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBearerAuth,
  ApiForbiddenResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiProperty,
  ApiPropertyOptional,
  ApiTags,
} from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsInt, IsOptional, Max, Min } from 'class-validator';
import { RequireProjectRole } from '../access/project-role.guard.js';
import type { AuthUser } from '../common/auth-user.js';
import { ClientIp, CurrentUser } from '../common/decorators.js';
import { ErrorBody } from '../common/error-body.js';
import { RETENTION_MAX } from '../common/project-settings.js';
import { RetentionRepository } from './retention.repository.js';
import { RetentionService } from './retention.service.js';

function toInt({ value }: { value: unknown }): unknown {
  return typeof value === 'string' && /^-?\d+$/.test(value) ? Number(value) : value;
}

const range = (field: string) => `${field} must be a whole number from 1 to ${RETENTION_MAX}`;

export class RetentionPreviewQueryDto {
  @ApiPropertyOptional({ minimum: 1, maximum: RETENTION_MAX })
  @IsOptional()
  @Transform(toInt)
  @IsInt({ message: range('keepDays') })
  @Min(1, { message: range('keepDays') })
  @Max(RETENTION_MAX, { message: range('keepDays') })
  keepDays?: number;

  @ApiPropertyOptional({ minimum: 1, maximum: RETENTION_MAX })
  @IsOptional()
  @Transform(toInt)
  @IsInt({ message: range('keepRuns') })
  @Min(1, { message: range('keepRuns') })
  @Max(RETENTION_MAX, { message: range('keepRuns') })
  keepRuns?: number;
}

export class RetentionPassDto {
  @ApiProperty() runsDeleted: number;
  @ApiProperty() resultsDeleted: number;
}

export class RetentionPreviewDto {
  @ApiProperty({ description: 'Runs the policy would remove now' }) runs: number;
  @ApiProperty({ description: 'Results (every attempt) of those runs' }) results: number;
}

@ApiTags('Projects')
@ApiBearerAuth()
@ApiNotFoundResponse({ type: ErrorBody, description: 'No such project, or one the caller cannot see' })
@Controller('api/projects/:projectId/retention')
export class RetentionController {
  constructor(
    private readonly retention: RetentionService,
    private readonly repo: RetentionRepository,
  ) {}

  @Post('run')
  @HttpCode(200)
  @RequireProjectRole('OWNER')
  @ApiOperation({
    summary: 'One retention pass of the project now (OWNER); audited RETENTION_CLEANUP',
    description:
      'Removes the finished, unpinned runs the policy (settings `retention`) does not keep, their results and the test ' +
      'cases left without results; answers once they are gone. Waits for a pass another replica is running.',
  })
  @ApiOkResponse({ type: RetentionPassDto })
  @ApiForbiddenResponse({ type: ErrorBody, description: 'Below OWNER' })
  run(
    @CurrentUser() user: AuthUser,
    @Param('projectId') projectId: string,
    @ClientIp() ip: string,
  ): Promise<RetentionPassDto> {
    return this.retention.passNow(projectId, user.id, ip);
  }

  @Get('preview')
  @RequireProjectRole('VIEWER')
  @ApiOperation({
    summary: 'What a retention policy would remove now (an addition to API.md)',
    description:
      'With `keepDays` and/or `keepRuns`: that policy (a bound not given: none); with neither: the saved one. ' +
      'Counts the finished, unpinned runs a pass would remove now and their results; removes nothing.',
  })
  @ApiOkResponse({ type: RetentionPreviewDto })
  @ApiBadRequestResponse({ type: ErrorBody, description: 'keepDays or keepRuns out of 1..100000' })
  async preview(
    @Param('projectId') projectId: string,
    @Query() query: RetentionPreviewQueryDto,
  ): Promise<RetentionPreviewDto> {
    const given = query.keepDays !== undefined || query.keepRuns !== undefined;
    const keep = given
      ? { keepDays: query.keepDays ?? null, keepRuns: query.keepRuns ?? null }
      : await this.repo.policyOf(projectId);
    return this.retention.preview(projectId, keep);
  }
}
