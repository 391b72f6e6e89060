import { Body, Controller, Delete, Get, HttpCode, Param, Put, Query } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBearerAuth,
  ApiBody,
  ApiForbiddenResponse,
  ApiNoContentResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import { RequireProjectRole } from '../access/project-role.guard.js';
import type { AuthUser } from '../common/auth-user.js';
import { ClientIp, CurrentUser } from '../common/decorators.js';
import { ErrorBody } from '../common/error-body.js';
import { type Page, PageOf } from '../common/paging/page.js';
import { PageQueryDto } from '../common/paging/page-query.dto.js';
import { TestCaseDto } from '../results/dto/results.dto.js';
import { QuarantinedTestDto, QuarantineTestDto } from './dto/quarantine.dto.js';
import { StabilityService } from './stability.service.js';

@ApiTags('Test health')
@ApiBearerAuth()
@ApiNotFoundResponse({
  type: ErrorBody,
  description: 'No such project or test, or one the caller cannot see',
})
@Controller('api/projects/:projectId')
export class StabilityController {
  constructor(private readonly stability: StabilityService) {}

  @Put('tests/:testId/quarantine')
  @RequireProjectRole('MAINTAINER')
  @ApiOperation({
    summary: 'Quarantine the test (MAINTAINER); audited TEST_QUARANTINED',
    description:
      'It still runs and its results are stored; it stops counting against the quality gate. Quarantining it again replaces the reason and until. A quarantine set here is never released by passing runs: only by DELETE or its `until`.',
  })
  @ApiBody({ type: QuarantineTestDto })
  @ApiOkResponse({ type: TestCaseDto })
  @ApiBadRequestResponse({
    type: ErrorBody,
    description: 'reason missing or blank, until not a future timestamp',
  })
  @ApiForbiddenResponse({ type: ErrorBody, description: 'Below MAINTAINER' })
  quarantine(
    @CurrentUser() user: AuthUser,
    @Param('projectId') projectId: string,
    @Param('testId') testId: string,
    @Body() dto: QuarantineTestDto,
    @ClientIp() ip: string,
  ): Promise<TestCaseDto> {
    return this.stability.quarantine(user, projectId, testId, dto, ip);
  }

  @Delete('tests/:testId/quarantine')
  @HttpCode(204)
  @RequireProjectRole('MAINTAINER')
  @ApiOperation({
    summary:
      "Release the test from quarantine (MAINTAINER); audited TEST_RELEASED. 204 also when it wasn't quarantined",
    description:
      'An automatically quarantined test released here is quarantined again only by a new failure, not by the evidence it was released with.',
  })
  @ApiNoContentResponse()
  @ApiForbiddenResponse({ type: ErrorBody, description: 'Below MAINTAINER' })
  release(
    @CurrentUser() user: AuthUser,
    @Param('projectId') projectId: string,
    @Param('testId') testId: string,
    @ClientIp() ip: string,
  ): Promise<void> {
    return this.stability.release(user, projectId, testId, ip);
  }

  @Get('quarantine')
  @RequireProjectRole('VIEWER')
  @ApiOperation({
    summary:
      "The project's quarantined tests: what a CI job reads to skip or ignore; sortable on since (default desc), name, id",
  })
  @ApiOkResponse({ type: PageOf(QuarantinedTestDto) })
  listQuarantined(
    @Param('projectId') projectId: string,
    @Query() query: PageQueryDto,
  ): Promise<Page<QuarantinedTestDto>> {
    return this.stability.listQuarantined(projectId, query);
  }
}
