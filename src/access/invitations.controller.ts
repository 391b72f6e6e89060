import { Body, Controller, HttpCode, Param, Post, Req } from '@nestjs/common';
import { ApiAcceptedResponse, ApiBadRequestResponse, ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Request } from 'express';
import type { AuthUser } from '../common/auth-user.js';
import { AdminOnly, ClientIp, CurrentUser, Public } from '../common/decorators.js';
import { ErrorBody } from '../common/error-body.js';
import {
  AcceptedMessageDto,
  AcceptInvitationDto,
  InvitationAcceptedDto,
  ProjectInvitationDto,
  WorkspaceInvitationDto,
} from './dto/invitation.dto.js';
import { InvitationsService } from './invitations.service.js';
import { RequireProjectRole } from './project-role.guard.js';
import type { ProjectRole } from './roles.js';

@ApiTags('Invitations')
@Controller('api')
export class InvitationsController {
  constructor(private readonly invitations: InvitationsService) {}

  @Post('projects/:projectId/invitations')
  @HttpCode(202)
  @ApiBearerAuth()
  @RequireProjectRole('MAINTAINER')
  @ApiOperation({ summary: 'Invite someone to the project by email (MAINTAINER; at most your own role)' })
  @ApiAcceptedResponse({ type: AcceptedMessageDto })
  inviteToProject(
    @CurrentUser() user: AuthUser,
    @Param('projectId') projectId: string,
    @Body() dto: ProjectInvitationDto,
    @Req() req: Request & { projectRole: ProjectRole },
    @ClientIp() ip: string,
  ): Promise<AcceptedMessageDto> {
    return this.invitations.inviteToProject(user, projectId, req.projectRole, dto, ip);
  }

  @Post('workspace/invitations')
  @HttpCode(202)
  @ApiBearerAuth()
  @AdminOnly()
  @ApiOperation({ summary: 'Invite someone to the workspace by email (platform admins)' })
  @ApiAcceptedResponse({ type: AcceptedMessageDto })
  inviteToWorkspace(@CurrentUser() user: AuthUser, @Body() dto: WorkspaceInvitationDto, @ClientIp() ip: string): Promise<AcceptedMessageDto> {
    return this.invitations.inviteToWorkspace(user, dto, ip);
  }

  @Public()
  @Post('invitations/accept')
  @HttpCode(200)
  @ApiOperation({ summary: 'Accept an invitation with its token; creates the local account when needed' })
  @ApiOkResponse({ type: InvitationAcceptedDto })
  @ApiBadRequestResponse({ type: ErrorBody, description: 'Invalid, expired or used token; missing name or weak password' })
  accept(@Body() dto: AcceptInvitationDto, @ClientIp() ip: string): Promise<InvitationAcceptedDto> {
    return this.invitations.accept(dto, ip);
  }
}
