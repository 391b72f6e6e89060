import { Body, Controller, Get, HttpCode, Param, ParseUUIDPipe, Post, Req } from '@nestjs/common';
import {
  ApiAcceptedResponse,
  ApiBearerAuth,
  ApiBody,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiServiceUnavailableResponse,
  ApiTags,
} from '@nestjs/swagger';
import { RequireProjectRole } from '../access/project-role.guard.js';
import { AppError } from '../common/app-error.js';
import { ErrorBody } from '../common/error-body.js';
import { type RawBodyRequest, utf8Body } from '../common/raw-body.js';
import {
  AcceptedUuidDto,
  AcceptedUuidsDto,
  AddResultsV2Dto,
  CreateRunV2Dto,
  FinishRunV2Dto,
  RunV2StatusDto,
} from './dto/v2.dto.js';
import { ResultsBatchPipe } from '../results/results-batch.validator.js';
import type { ResultsBatch } from '../results/results-batch.validator.js';
import { IngestV2Service } from './ingest-v2.service.js';

const RunUuid = new ParseUUIDPipe({ exceptionFactory: () => AppError.validation('runUuid must be a UUID') });

/** V2: asynchronous, queue-backed writes with client UUIDs; 202 once the message is durably queued. */
@ApiTags('Test results (V2)')
@ApiBearerAuth()
@ApiServiceUnavailableResponse({ type: ErrorBody, description: 'The queue cannot take messages now; retry later' })
@ApiNotFoundResponse({ type: ErrorBody, description: 'No such project, or one the caller cannot see' })
@Controller('api/v2/projects/:projectId/runs')
export class IngestV2Controller {
  constructor(private readonly ingest: IngestV2Service) {}

  @Post()
  @HttpCode(202)
  @RequireProjectRole('REPORTER')
  @ApiOperation({ summary: 'Queue a new run (REPORTER); idempotent by uuid' })
  @ApiAcceptedResponse({ type: AcceptedUuidDto })
  createRun(@Param('projectId') projectId: string, @Body() dto: CreateRunV2Dto): Promise<AcceptedUuidDto> {
    return this.ingest.createRun(projectId, dto);
  }

  @Post(':runUuid/results')
  @HttpCode(202)
  @RequireProjectRole('REPORTER')
  @ApiOperation({
    summary: 'Queue up to 5000 results (REPORTER); may arrive before the run; idempotent by uuid',
    description: 'Results processed after the run was finished are kept (V1 answers 409 instead): the queue does not order them after the finish.',
  })
  @ApiBody({ type: AddResultsV2Dto })
  @ApiAcceptedResponse({ type: AcceptedUuidsDto })
  addResults(
    @Param('projectId') projectId: string,
    @Param('runUuid', RunUuid) runUuid: string,
    @Body(new ResultsBatchPipe(5000, true)) dto: ResultsBatch<AddResultsV2Dto>,
    @Req() req: RawBodyRequest,
  ): Promise<AcceptedUuidsDto> {
    return this.ingest.addResults(projectId, runUuid, dto, utf8Body(req));
  }

  @Post(':runUuid/finish')
  @HttpCode(202)
  @RequireProjectRole('REPORTER')
  @ApiOperation({
    summary: 'Queue the end of the run (REPORTER)',
    description: 'A finishedAt before the run started is stored as the start: the run may not be processed yet when this is queued.',
  })
  @ApiAcceptedResponse({ type: AcceptedUuidDto })
  finish(
    @Param('projectId') projectId: string,
    @Param('runUuid', RunUuid) runUuid: string,
    @Body() dto: FinishRunV2Dto,
  ): Promise<AcceptedUuidDto> {
    return this.ingest.finish(projectId, runUuid, dto);
  }

  @Get(':runUuid')
  @RequireProjectRole('VIEWER')
  @ApiOperation({ summary: 'The run once processed, with its numeric id and counts; 404 before' })
  @ApiOkResponse({ type: RunV2StatusDto })
  status(@Param('projectId') projectId: string, @Param('runUuid', RunUuid) runUuid: string): Promise<RunV2StatusDto> {
    return this.ingest.status(projectId, runUuid);
  }
}
