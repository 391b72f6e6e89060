import { Controller, Get, Param, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiNotFoundResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { RequireProjectRole } from '../access/project-role.guard.js';
import { ErrorBody } from '../common/error-body.js';
import { PageOf } from '../common/paging/page.js';
import { PageQueryDto } from '../common/paging/page-query.dto.js';
import {
  CompareQueryDto,
  CompareTestsQueryDto,
  ComparisonDto,
  FailureGroupDto,
  StreamDto,
  SuiteDto,
  TestChangeDto,
  TrendDto,
  TrendQueryDto,
} from './dto/insights.dto.js';
import { InsightsService } from './insights.service.js';

/** Reads behind the run, comparison and trend views: each over one run's results, or a project's runs, by an index. */
@ApiTags('Runs: failures, comparison, trend')
@ApiBearerAuth()
@ApiNotFoundResponse({ type: ErrorBody, description: 'No such project/run, or one the caller cannot see' })
@Controller('api')
export class InsightsController {
  constructor(private readonly insights: InsightsService) {}

  @Get('runs/:runId/failure-groups')
  @RequireProjectRole('VIEWER', 'runId')
  @ApiOperation({
    summary:
      "The run's failures grouped by their normalised message; sortable on count (default, largest first), key",
    description:
      'Numbers, UUIDs and hexadecimal ids, and temporary paths are stripped from the message before grouping, so one ' +
      'cause shows as one group. GET /api/runs/{runId}/results?group={key} lists the results of a group.',
  })
  @ApiOkResponse({ type: PageOf(FailureGroupDto) })
  failureGroups(@Param('runId') runId: string, @Query() query: PageQueryDto) {
    return this.insights.failureGroups(runId, query);
  }

  @Get('runs/:runId/suites')
  @RequireProjectRole('VIEWER', 'runId')
  @ApiOperation({ summary: "The run's suites with their counts; sortable on suite (default), total, failed" })
  @ApiOkResponse({ type: PageOf(SuiteDto) })
  suites(@Param('runId') runId: string, @Query() query: PageQueryDto) {
    return this.insights.suites(runId, query);
  }

  @Get('runs/:runId/compare')
  @RequireProjectRole('VIEWER', 'runId')
  @ApiOperation({
    summary: 'How many tests changed, and how, since another run of the project (by default the one before)',
    description:
      "A test's outcome in a run is its last attempt's. NEW_FAILURE: failing now, not before; FIXED: failing before, " +
      'not now; STILL_FAILING; FLAKY: passed and failed within either run, or across the two when both carry the same ' +
      '`commit` attribute; ADDED, REMOVED; UNCHANGED.',
  })
  @ApiOkResponse({ type: ComparisonDto })
  compare(@Param('runId') runId: string, @Query() query: CompareQueryDto): Promise<ComparisonDto> {
    return this.insights.compare(runId, query.base);
  }

  @Get('runs/:runId/compare/tests')
  @RequireProjectRole('VIEWER', 'runId')
  @ApiOperation({
    summary:
      'The tests that changed (see compare), optionally of some changes only; sortable on suite, name (default suite,name)',
  })
  @ApiOkResponse({ type: PageOf(TestChangeDto) })
  compareTests(@Param('runId') runId: string, @Query() query: CompareTestsQueryDto) {
    return this.insights.compareTests(runId, query);
  }

  @Get('projects/:projectId/trend')
  @RequireProjectRole('VIEWER')
  @ApiOperation({ summary: "The project's latest runs, oldest first, with their pass rate and duration" })
  @ApiOkResponse({ type: TrendDto })
  trend(@Param('projectId') projectId: string, @Query() query: TrendQueryDto): Promise<TrendDto> {
    return this.insights.trend(projectId, query.runs, query.stream);
  }

  @Get('projects/:projectId/streams')
  @RequireProjectRole('VIEWER')
  @ApiOperation({
    summary: "The project's streams (runs compared with each other), the one with the run started last first",
  })
  @ApiOkResponse({ type: PageOf(StreamDto) })
  streams(@Param('projectId') projectId: string, @Query() query: PageQueryDto) {
    return this.insights.streams(projectId, query);
  }
}
