import { Controller, Get, Param } from '@nestjs/common';
import { ApiBearerAuth, ApiNotFoundResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { RequireProjectRole } from '../access/project-role.guard.js';
import { ErrorBody } from '../common/error-body.js';
import { GateDto } from './dto/gate.dto.js';
import { GateService } from './gate.service.js';

@ApiTags('Quality gate')
@ApiBearerAuth()
@ApiNotFoundResponse({ type: ErrorBody, description: 'No such run, or one the caller cannot see' })
@Controller('api')
export class GateController {
  constructor(private readonly gate: GateService) {}

  @Get('runs/:runId/gate')
  @RequireProjectRole('VIEWER', 'runId')
  @ApiOperation({
    summary:
      "The run's quality gate: its status and each condition with what was expected and what the run had",
    description:
      "Evaluated over the project settings' `gate` when the run finishes, and again when a quarantine or a failure " +
      "signature's triage or issue changes while the run is the latest finished run of its stream. Results of " +
      'quarantined tests (ignoreQuarantined) and failures with a known issue (ignoreKnownIssues) do not count ' +
      'against maxFailed, minPassRate and noNewFailures; `ignored` says how many were left out. minTotal counts ' +
      'every test that ran, skipped and ignored ones included. Live event `run.gate` with `{runId, gate}`.',
  })
  @ApiOkResponse({ type: GateDto })
  get(@Param('runId') runId: string): Promise<GateDto> {
    return this.gate.gate(runId);
  }
}
