import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put, Query } from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiBody,
  ApiConflictResponse,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import { RequireProjectRole } from '../access/project-role.guard.js';
import { ErrorBody } from '../common/error-body.js';
import { PageOf } from '../common/paging/page.js';
import { PageQueryDto } from '../common/paging/page-query.dto.js';
import {
  AddResultsDto,
  CreateRunDto,
  FinishRunDto,
  HistoryItemDto,
  ResultDetailDto,
  ResultDto,
  ResultIdsDto,
  ResultsQueryDto,
  RunDto,
  RunsQueryDto,
  TestCaseDto,
  TestCasePageDto,
  TestsQueryDto,
} from '../results/dto/results.dto.js';
import { ResultsBatchPipe } from '../results/results-batch.validator.js';
import type { ResultsBatch } from '../results/results-batch.validator.js';
import { ResultsService } from '../results/results.service.js';

/** V1: synchronous writes that answer with numeric ids. */
@ApiTags('Test results (V1)')
@ApiBearerAuth()
@ApiNotFoundResponse({ type: ErrorBody, description: 'No such project/run, or one the caller cannot see' })
@Controller('api')
export class RunsV1Controller {
  constructor(private readonly results: ResultsService) {}

  @Post('projects/:projectId/runs')
  @RequireProjectRole('REPORTER')
  @ApiOperation({ summary: 'Start a run (REPORTER)' })
  @ApiCreatedResponse({ type: RunDto })
  createRun(@Param('projectId') projectId: string, @Body() dto: CreateRunDto): Promise<RunDto> {
    return this.results.createRun(projectId, dto);
  }

  @Get('projects/:projectId/runs')
  @RequireProjectRole('VIEWER')
  @ApiOperation({
    summary:
      'Runs of the project with their counts, optionally of one status or with a name holding `q`; sortable on startedAt (default, newest first), name, id',
  })
  @ApiOkResponse({ type: PageOf(RunDto) })
  listRuns(@Param('projectId') projectId: string, @Query() query: RunsQueryDto) {
    return this.results.listRuns(projectId, query);
  }

  @Get('runs/:runId')
  @RequireProjectRole('VIEWER', 'runId')
  @ApiOperation({ summary: 'One run with its counts' })
  @ApiOkResponse({ type: RunDto })
  getRun(@Param('runId') runId: string): Promise<RunDto> {
    return this.results.getRun(runId);
  }

  @Post('runs/:runId/results')
  @RequireProjectRole('REPORTER', 'runId')
  @ApiOperation({
    summary: 'Add up to 1000 results, all or nothing (REPORTER)',
    description:
      'The ids answer in input order; a result whose uuid is stored already in this run is not stored again and ' +
      'answers with its stored id (in another run of the project: 409). A finished run takes no more results (409); ' +
      'V2, whose results may be processed after the finish ' +
      'that followed them, keeps them instead.',
  })
  @ApiBody({ type: AddResultsDto })
  @ApiCreatedResponse({ type: ResultIdsDto })
  @ApiConflictResponse({ type: ErrorBody, description: 'The run is finished' })
  addResults(
    @Param('runId') runId: string,
    @Body(new ResultsBatchPipe(1000, false)) dto: ResultsBatch<AddResultsDto>,
  ): Promise<{ ids: number[] }> {
    return this.results.addResults(runId, dto);
  }

  @Get('runs/:runId/results')
  @RequireProjectRole('VIEWER', 'runId')
  @ApiOperation({
    summary:
      'Results of the run, filtered by status, suite, name (`q`) or failure group; sortable on id (default), name, suite, status, durationMs',
  })
  @ApiOkResponse({ type: PageOf(ResultDto) })
  listResults(@Param('runId') runId: string, @Query() query: ResultsQueryDto) {
    return this.results.listResults(runId, query);
  }

  @Get('runs/:runId/results/:resultId')
  @RequireProjectRole('VIEWER', 'runId')
  @ApiOperation({ summary: 'One result of the run, with every attempt of its test in the run' })
  @ApiOkResponse({ type: ResultDetailDto })
  getResult(@Param('runId') runId: string, @Param('resultId') resultId: string): Promise<ResultDetailDto> {
    return this.results.getResult(runId, resultId);
  }

  @Post('runs/:runId/finish')
  @HttpCode(200)
  @RequireProjectRole('REPORTER', 'runId')
  @ApiOperation({
    summary: 'Mark the run FINISHED (REPORTER)',
    description:
      'A finishedAt before the run started is a 400 (V2, which cannot check it before queueing, stores the start instead).',
  })
  @ApiOkResponse({ type: RunDto })
  finish(@Param('runId') runId: string, @Body() dto: FinishRunDto): Promise<RunDto> {
    return this.results.finishRun(runId, dto);
  }

  @Delete('runs/:runId')
  @HttpCode(204)
  @RequireProjectRole('MAINTAINER', 'runId')
  @ApiOperation({
    summary: 'Delete the run and its results (MAINTAINER)',
    description:
      'Answers at once: the run is gone from every read, and its results are deleted in bounded batches in the background.',
  })
  @ApiNoContentResponse()
  deleteRun(@Param('runId') runId: string): Promise<void> {
    return this.results.deleteRun(runId);
  }

  @Put('runs/:runId/pin')
  @RequireProjectRole('MAINTAINER', 'runId')
  @ApiOperation({ summary: 'Pin the run: the retention cleanup keeps it whatever its age (MAINTAINER)' })
  @ApiOkResponse({ type: RunDto })
  pin(@Param('runId') runId: string): Promise<RunDto> {
    return this.results.pin(runId);
  }

  @Delete('runs/:runId/pin')
  @HttpCode(204)
  @RequireProjectRole('MAINTAINER', 'runId')
  @ApiOperation({ summary: 'Unpin the run (MAINTAINER)' })
  @ApiNoContentResponse()
  unpin(@Param('runId') runId: string): Promise<void> {
    return this.results.unpin(runId);
  }

  @Get('projects/:projectId/tests')
  @RequireProjectRole('VIEWER')
  @ApiOperation({
    summary:
      'Test cases with their health; `q` searches suite and name, `state` filters (HEALTHY, FAILING, FLAKY, QUARANTINED); sortable on name, flakeRate, lastFailedAt, firstSeenAt, suite, id (default suite,name)',
    description:
      'Health is read from columns kept as results are written (lastFailedAt sorts nulls last; flakeRate sorts a test that has not run twice, whose flakeRate is null, as 0: it has no flips either). With a sort on suite, name or id the page also carries `nextCursor`: pass it as `cursor` for the next page, read from where this one ended (as fast at any depth, and no recount of the total); other sorts page by number.',
  })
  @ApiOkResponse({ type: TestCasePageDto })
  listTests(@Param('projectId') projectId: string, @Query() query: TestsQueryDto) {
    return this.results.listTests(projectId, query);
  }

  @Get('projects/:projectId/tests/:testId')
  @RequireProjectRole('VIEWER')
  @ApiOperation({ summary: 'One test case with its health: state, flakiness, flake rate, quarantine' })
  @ApiOkResponse({ type: TestCaseDto })
  getTest(@Param('projectId') projectId: string, @Param('testId') testId: string): Promise<TestCaseDto> {
    return this.results.getTest(projectId, testId);
  }

  @Get('projects/:projectId/tests/:testId/history')
  @RequireProjectRole('VIEWER')
  @ApiOperation({ summary: "The test's results across runs, newest stored first; sortable on id" })
  @ApiOkResponse({ type: PageOf(HistoryItemDto) })
  history(
    @Param('projectId') projectId: string,
    @Param('testId') testId: string,
    @Query() query: PageQueryDto,
  ) {
    return this.results.history(projectId, testId, query);
  }
}
