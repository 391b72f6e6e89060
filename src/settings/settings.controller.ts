import { Body, Controller, Get, Param, Patch, Req } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBearerAuth,
  ApiBody,
  ApiForbiddenResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import type { Request } from 'express';
import { RequireProjectRole } from '../access/project-role.guard.js';
import type { ProjectRole } from '../access/roles.js';
import type { AuthUser } from '../common/auth-user.js';
import { ClientIp, CurrentUser } from '../common/decorators.js';
import { ErrorBody } from '../common/error-body.js';
import type { ProjectSettings } from '../common/project-settings.js';
import { ProjectSettingsDto, ProjectSettingsPatchDto } from './settings.dto.js';
import { SettingsService } from './settings.service.js';

@ApiTags('Projects')
@ApiBearerAuth()
@ApiNotFoundResponse({ type: ErrorBody, description: 'No such project, or one the caller cannot see' })
@Controller('api/projects/:projectId/settings')
export class SettingsController {
  constructor(private readonly settings: SettingsService) {}

  @Get()
  @RequireProjectRole('VIEWER')
  @ApiOperation({ summary: "The project's settings: every field with its effective value" })
  @ApiOkResponse({ type: ProjectSettingsDto })
  get(@Param('projectId') projectId: string): Promise<ProjectSettings> {
    return this.settings.get(projectId);
  }

  @Patch()
  @RequireProjectRole('MAINTAINER')
  @ApiOperation({
    summary:
      'Change any of the settings (MAINTAINER; retention: OWNER), validated whole; audited PROJECT_SETTINGS_CHANGED',
  })
  @ApiBody({ type: ProjectSettingsPatchDto })
  @ApiOkResponse({ type: ProjectSettingsDto })
  @ApiBadRequestResponse({ type: ErrorBody, description: 'A field unknown or out of range: each one named' })
  @ApiForbiddenResponse({ type: ErrorBody, description: 'Below MAINTAINER, or retention below OWNER' })
  change(
    @CurrentUser() user: AuthUser,
    @Param('projectId') projectId: string,
    // Validated whole by validatePatch (the global pipe leaves a plain object alone).
    @Body() body: Record<string, unknown>,
    @Req() req: Request & { projectRole: ProjectRole },
    @ClientIp() ip: string,
  ): Promise<ProjectSettings> {
    return this.settings.change(user, projectId, req.projectRole, body, ip);
  }
}
