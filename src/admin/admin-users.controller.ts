import { Body, Controller, Get, Param, Patch, Query } from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiBadRequestResponse,
  ApiConflictResponse,
  ApiForbiddenResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import type { AuthUser } from '../common/auth-user.js';
import { AdminOnly, ClientIp, CurrentUser } from '../common/decorators.js';
import { ErrorBody } from '../common/error-body.js';
import { Page, PageOf } from '../common/paging/page.js';
import { AdminUsersService } from './admin-users.service.js';
import { AdminUserDto, AdminUsersQueryDto, UpdateUserDto } from './dto/admin-user.dto.js';

@ApiTags('Administration')
@ApiBearerAuth()
@AdminOnly()
@ApiForbiddenResponse({ type: ErrorBody, description: 'Not a platform administrator' })
@Controller('api/admin/users')
export class AdminUsersController {
  constructor(private readonly users: AdminUsersService) {}

  @Get()
  @ApiOperation({
    summary: 'All users; `q` searches email and full name; sortable on id, email, fullName, createdAt',
  })
  @ApiOkResponse({ type: PageOf(AdminUserDto) })
  @ApiBadRequestResponse({ type: ErrorBody })
  list(@Query() query: AdminUsersQueryDto): Promise<Page<AdminUserDto>> {
    return this.users.list(query);
  }

  @Patch(':id')
  @ApiOperation({
    summary: 'Grant or remove platform administration, enable or disable an account',
    description:
      "Disabling revokes the user's sessions (refresh tokens) and deletes their API tokens. " +
      'Administrators cannot demote or disable themselves (409).',
  })
  @ApiOkResponse({ type: AdminUserDto })
  @ApiNotFoundResponse({ type: ErrorBody })
  @ApiConflictResponse({ type: ErrorBody, description: 'Demoting or disabling yourself' })
  update(
    @CurrentUser() actor: AuthUser,
    @Param('id') id: string,
    @Body() dto: UpdateUserDto,
    @ClientIp() ip: string,
  ): Promise<AdminUserDto> {
    return this.users.update(actor, id, dto, ip);
  }
}
