import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Put, Query } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBearerAuth,
  ApiBody,
  ApiConflictResponse,
  ApiCreatedResponse,
  ApiForbiddenResponse,
  ApiNoContentResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import type { AuthUser } from '../common/auth-user.js';
import { AdminOnly, ClientIp, CurrentUser } from '../common/decorators.js';
import { ErrorBody } from '../common/error-body.js';
import { Page, PageOf } from '../common/paging/page.js';
import { PageQueryDto } from '../common/paging/page-query.dto.js';
import { AdminGroupsService } from './admin-groups.service.js';
import { BindingsPipe } from './bindings.pipe.js';
import {
  CreatedGroupDto,
  CreateGroupDto,
  GroupBindingDto,
  GroupDto,
  GroupMemberDto,
  GroupSummaryDto,
  MAX_BINDINGS,
} from './dto/group.dto.js';

@ApiTags('Administration')
@ApiBearerAuth()
@AdminOnly()
@ApiForbiddenResponse({ type: ErrorBody, description: 'Not a platform administrator' })
@Controller('api/admin/groups')
export class AdminGroupsController {
  constructor(private readonly groups: AdminGroupsService) {}

  @Post()
  @ApiOperation({ summary: 'Create a group; names are exact and case-sensitive' })
  @ApiCreatedResponse({ type: CreatedGroupDto })
  @ApiConflictResponse({ type: ErrorBody, description: 'A group with this exact name exists' })
  create(
    @CurrentUser() actor: AuthUser,
    @Body() dto: CreateGroupDto,
    @ClientIp() ip: string,
  ): Promise<CreatedGroupDto> {
    return this.groups.create(actor, dto, ip);
  }

  @Get()
  @ApiOperation({ summary: 'All groups with their member counts; sortable on id, name (default name,asc)' })
  @ApiOkResponse({ type: PageOf(GroupSummaryDto) })
  list(@Query() query: PageQueryDto): Promise<Page<GroupSummaryDto>> {
    return this.groups.list(query);
  }

  @Get(':id')
  @ApiOperation({ summary: 'A group with its project bindings' })
  @ApiOkResponse({ type: GroupDto })
  @ApiNotFoundResponse({ type: ErrorBody })
  get(@Param('id') id: string): Promise<GroupDto> {
    return this.groups.get(id);
  }

  @Patch(':id')
  @ApiOperation({ summary: 'Rename a group (exact, case-sensitive; directory groups then match the new name)' })
  @ApiOkResponse({ type: GroupDto })
  @ApiConflictResponse({ type: ErrorBody, description: 'Another group has this exact name' })
  @ApiNotFoundResponse({ type: ErrorBody })
  rename(
    @CurrentUser() actor: AuthUser,
    @Param('id') id: string,
    @Body() dto: CreateGroupDto,
    @ClientIp() ip: string,
  ): Promise<GroupDto> {
    return this.groups.rename(actor, id, dto, ip);
  }

  @Get(':id/members')
  @ApiOperation({ summary: "A group's members, each membership with its source (MANUAL or DIRECTORY)" })
  @ApiOkResponse({ type: PageOf(GroupMemberDto) })
  @ApiNotFoundResponse({ type: ErrorBody })
  async members(@Param('id') id: string): Promise<Page<GroupMemberDto>> {
    const members = await this.groups.members(id);
    return { content: members, page: 0, size: members.length, totalElements: members.length, totalPages: 1 };
  }

  @Delete(':id')
  @HttpCode(204)
  @ApiOperation({ summary: 'Delete a group with its bindings and memberships' })
  @ApiNoContentResponse()
  @ApiNotFoundResponse({ type: ErrorBody })
  delete(@CurrentUser() actor: AuthUser, @Param('id') id: string, @ClientIp() ip: string): Promise<void> {
    return this.groups.delete(actor, id, ip);
  }

  @Put(':id/bindings')
  @ApiOperation({
    summary: 'Replace all project bindings of a group at once',
    description: `Up to ${MAX_BINDINGS} items, each project at most once. Nothing changes when any item is invalid.`,
  })
  @ApiBody({ type: [GroupBindingDto] })
  @ApiOkResponse({ type: GroupDto })
  @ApiBadRequestResponse({ type: ErrorBody, description: 'An invalid item or an unknown project' })
  @ApiNotFoundResponse({ type: ErrorBody })
  replaceBindings(
    @CurrentUser() actor: AuthUser,
    @Param('id') id: string,
    @Body(BindingsPipe) bindings: GroupBindingDto[],
    @ClientIp() ip: string,
  ): Promise<GroupDto> {
    return this.groups.replaceBindings(actor, id, bindings, ip);
  }

  @Put(':id/members/:userId')
  @HttpCode(204)
  @ApiOperation({ summary: 'Add a user to a group (a manual membership); idempotent' })
  @ApiNoContentResponse()
  @ApiNotFoundResponse({ type: ErrorBody, description: 'Unknown group or user' })
  addMember(
    @CurrentUser() actor: AuthUser,
    @Param('id') id: string,
    @Param('userId') userId: string,
    @ClientIp() ip: string,
  ): Promise<void> {
    return this.groups.addMember(actor, id, userId, ip);
  }

  @Delete(':id/members/:userId')
  @HttpCode(204)
  @ApiOperation({
    summary: "Remove a user's manual membership of a group; idempotent",
    description: 'Directory-synced memberships stay: directory sync manages them at each directory login.',
  })
  @ApiNoContentResponse()
  @ApiNotFoundResponse({ type: ErrorBody, description: 'Unknown group or user' })
  removeMember(
    @CurrentUser() actor: AuthUser,
    @Param('id') id: string,
    @Param('userId') userId: string,
    @ClientIp() ip: string,
  ): Promise<void> {
    return this.groups.removeMember(actor, id, userId, ip);
  }
}
