import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Put, Query, Req } from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiConflictResponse,
  ApiCreatedResponse,
  ApiForbiddenResponse,
  ApiNoContentResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import type { Request } from 'express';
import type { AuthUser } from '../common/auth-user.js';
import { ClientIp, CurrentUser } from '../common/decorators.js';
import { ErrorBody } from '../common/error-body.js';
import { PageQueryDto } from '../common/paging/page-query.dto.js';
import { PageOf } from '../common/paging/page.js';
import {
  CreateProjectDto,
  ProjectDto,
  ProjectMemberDto,
  ProjectsQueryDto,
  SetMemberRoleDto,
  UpdateProjectDto,
} from './dto/project.dto.js';
import { RequireProjectRole } from './project-role.guard.js';
import { ProjectsService } from './projects.service.js';
import type { ProjectRole } from './roles.js';

type WithRole = Request & { projectRole: ProjectRole };

@ApiTags('Projects')
@ApiBearerAuth()
@ApiNotFoundResponse({ type: ErrorBody, description: 'No such project, or one the caller cannot see' })
@ApiForbiddenResponse({ type: ErrorBody, description: 'The caller’s role in the project is too low' })
@Controller('api/projects')
export class ProjectsController {
  constructor(private readonly projects: ProjectsService) {}

  @Post()
  @ApiOperation({ summary: 'Create a project; the creator becomes its OWNER' })
  @ApiCreatedResponse({ type: ProjectDto })
  @ApiConflictResponse({ type: ErrorBody, description: 'The key is taken' })
  create(@CurrentUser() user: AuthUser, @Body() dto: CreateProjectDto, @ClientIp() ip: string): Promise<ProjectDto> {
    return this.projects.create(user, dto, ip);
  }

  @Get()
  @ApiOperation({
    summary: 'Projects the caller can see, each with the caller’s role; sortable on id, key, name, createdAt',
    description: '`key` finds one project by its key: a page of it, or an empty page when there is none the caller can see.',
  })
  @ApiOkResponse({ type: PageOf(ProjectDto) })
  list(@CurrentUser() user: AuthUser, @Query() query: ProjectsQueryDto) {
    return this.projects.list(user, query);
  }

  @Get(':projectId')
  @RequireProjectRole('VIEWER')
  @ApiOperation({ summary: 'One project, with the caller’s role and its latest run' })
  @ApiOkResponse({ type: ProjectDto })
  get(@Param('projectId') projectId: string, @Req() req: WithRole): Promise<ProjectDto> {
    return this.projects.get(projectId, req.projectRole);
  }

  @Patch(':projectId')
  @RequireProjectRole('OWNER')
  @ApiOperation({ summary: 'Change name or description (OWNER)' })
  @ApiOkResponse({ type: ProjectDto })
  update(
    @CurrentUser() user: AuthUser,
    @Param('projectId') projectId: string,
    @Body() dto: UpdateProjectDto,
    @Req() req: WithRole,
    @ClientIp() ip: string,
  ): Promise<ProjectDto> {
    return this.projects.update(user, projectId, dto, req.projectRole, ip);
  }

  @Delete(':projectId')
  @HttpCode(204)
  @RequireProjectRole('OWNER')
  @ApiOperation({ summary: 'Delete the project and everything in it (OWNER)' })
  @ApiNoContentResponse()
  delete(@CurrentUser() user: AuthUser, @Param('projectId') projectId: string, @ClientIp() ip: string): Promise<void> {
    return this.projects.delete(user, projectId, ip);
  }

  @Get(':projectId/members')
  @RequireProjectRole('VIEWER')
  @ApiOperation({ summary: 'Members with their effective role and where it comes from; sortable on email, fullName, role' })
  @ApiOkResponse({ type: PageOf(ProjectMemberDto) })
  members(@Param('projectId') projectId: string, @Query() query: PageQueryDto) {
    return this.projects.members(projectId, query);
  }

  @Put(':projectId/members/:userId')
  @RequireProjectRole('OWNER')
  @ApiOperation({ summary: 'Add a member or change their direct role (OWNER)' })
  @ApiOkResponse({ type: ProjectMemberDto })
  setMember(
    @CurrentUser() user: AuthUser,
    @Param('projectId') projectId: string,
    @Param('userId') userId: string,
    @Body() dto: SetMemberRoleDto,
    @ClientIp() ip: string,
  ): Promise<ProjectMemberDto> {
    return this.projects.setMember(user, projectId, userId, dto.role, ip);
  }

  @Delete(':projectId/members/:userId')
  @HttpCode(204)
  @RequireProjectRole('OWNER')
  @ApiOperation({ summary: 'Remove a direct membership (OWNER); group bindings stay' })
  @ApiNoContentResponse()
  removeMember(
    @CurrentUser() user: AuthUser,
    @Param('projectId') projectId: string,
    @Param('userId') userId: string,
    @ClientIp() ip: string,
  ): Promise<void> {
    return this.projects.removeMember(user, projectId, userId, ip);
  }
}
