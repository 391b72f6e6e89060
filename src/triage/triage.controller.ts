import { Body, Controller, Get, Param, Patch, Query } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBearerAuth,
  ApiForbiddenResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import { RequireProjectRole } from '../access/project-role.guard.js';
import type { AuthUser } from '../common/auth-user.js';
import { ClientIp, CurrentUser } from '../common/decorators.js';
import { ErrorBody } from '../common/error-body.js';
import { Page, PageOf } from '../common/paging/page.js';
import {
  FailureDetailDto,
  FailureSignatureDto,
  FailuresQueryDto,
  PatchFailureDto,
  SimilarFailureDto,
} from './dto/failure.dto.js';
import { TriageService } from './triage.service.js';

@ApiTags('Failures: signatures and triage')
@ApiBearerAuth()
@ApiNotFoundResponse({
  type: ErrorBody,
  description: 'No such project/failure, or one the caller cannot see',
})
@Controller('api')
export class TriageController {
  constructor(private readonly triage: TriageService) {}

  @Get('projects/:projectId/failures')
  @RequireProjectRole('VIEWER')
  @ApiOperation({
    summary:
      "The project's failure signatures: search (`q`), triage, assignee and new filters; sortable on lastSeen " +
      '(default, latest first), occurrences, firstSeen',
  })
  @ApiOkResponse({ type: PageOf(FailureSignatureDto) })
  @ApiBadRequestResponse({ type: ErrorBody, description: 'An unknown triage, sort field or a bad page' })
  list(
    @CurrentUser() user: AuthUser,
    @Param('projectId') projectId: string,
    @Query() query: FailuresQueryDto,
  ): Promise<Page<FailureSignatureDto>> {
    return this.triage.list(user, projectId, query);
  }

  @Get('failures/:failureId')
  @RequireProjectRole('VIEWER', 'failureId')
  @ApiOperation({ summary: 'A failure signature with the last 20 runs and the 50 tests it appeared in most' })
  @ApiOkResponse({ type: FailureDetailDto })
  get(@Param('failureId') failureId: string): Promise<FailureDetailDto> {
    return this.triage.get(failureId);
  }

  @Get('failures/:failureId/similar')
  @RequireProjectRole('VIEWER', 'failureId')
  @ApiOperation({
    summary:
      'Up to 10 signatures of the same project with similar keys (trigram similarity), most similar first',
  })
  @ApiOkResponse({ type: [SimilarFailureDto] })
  similar(@Param('failureId') failureId: string): Promise<SimilarFailureDto[]> {
    return this.triage.similar(failureId);
  }

  @Patch('failures/:failureId')
  @RequireProjectRole('REPORTER', 'failureId')
  @ApiOperation({
    summary:
      'Triage a failure signature (REPORTER): triage, issue link (http or https), note, assignee; applies to ' +
      'every occurrence, past and future; audited FAILURE_TRIAGED',
  })
  @ApiOkResponse({ type: FailureDetailDto })
  @ApiBadRequestResponse({
    type: ErrorBody,
    description:
      'An unknown triage, an issue URL that is not http(s), a note too long, an assignee who cannot see the project',
  })
  @ApiForbiddenResponse({ type: ErrorBody, description: 'Below REPORTER' })
  change(
    @CurrentUser() user: AuthUser,
    @Param('failureId') failureId: string,
    @Body() dto: PatchFailureDto,
    @ClientIp() ip: string,
  ): Promise<FailureDetailDto> {
    return this.triage.change(user, failureId, dto, ip);
  }
}
