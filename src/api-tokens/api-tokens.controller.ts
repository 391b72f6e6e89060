import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiCreatedResponse,
  ApiForbiddenResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import type { AuthUser } from '../common/auth-user.js';
import { ClientIp, CurrentUser, InteractiveOnly } from '../common/decorators.js';
import { ErrorBody } from '../common/error-body.js';
import { PageOf } from '../common/paging/page.js';
import { PageQueryDto } from '../common/paging/page-query.dto.js';
import { ApiTokensService } from './api-tokens.service.js';
import { ApiTokenDto, CreateApiTokenDto, CreatedApiTokenDto } from './dto/api-token.dto.js';

@ApiTags('API keys')
@ApiBearerAuth()
@InteractiveOnly()
@ApiForbiddenResponse({ type: ErrorBody, description: 'An API token cannot manage API tokens' })
@Controller('api/users/me/api-keys')
export class ApiTokensController {
  constructor(private readonly tokens: ApiTokensService) {}

  @Post()
  @ApiOperation({
    summary: 'Create an API token (Profile → API keys); the token is shown only in this response',
  })
  @ApiCreatedResponse({ type: CreatedApiTokenDto })
  create(
    @CurrentUser() user: AuthUser,
    @Body() dto: CreateApiTokenDto,
    @ClientIp() ip: string,
  ): Promise<CreatedApiTokenDto> {
    return this.tokens.create(user, dto, ip);
  }

  @Get()
  @ApiOperation({ summary: 'Your API tokens; sortable on createdAt, name, lastUsedAt' })
  @ApiOkResponse({ type: PageOf(ApiTokenDto) })
  list(@CurrentUser() user: AuthUser, @Query() query: PageQueryDto) {
    return this.tokens.list(user, query);
  }

  @Delete(':id')
  @HttpCode(204)
  @ApiOperation({ summary: 'Revoke an API token; it stops working at once' })
  @ApiNoContentResponse()
  revoke(@CurrentUser() user: AuthUser, @Param('id') id: string, @ClientIp() ip: string): Promise<void> {
    return this.tokens.revoke(user, id, ip);
  }
}
