import { Body, Controller, Get, Param, Put } from '@nestjs/common';
import { ApiBearerAuth, ApiNotFoundResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { RequireProjectRole } from '../access/project-role.guard.js';
import type { AuthUser } from '../common/auth-user.js';
import { CurrentUser } from '../common/decorators.js';
import { ErrorBody } from '../common/error-body.js';
import { PutSubscriptionDto, NotificationSubscriptionDto } from './dto/webhooks.dto.js';
import { SubscriptionsRepository } from './subscriptions.repository.js';

@ApiTags('Notifications')
@ApiBearerAuth()
@ApiNotFoundResponse({ type: ErrorBody, description: 'No such project, or one the caller cannot see' })
@Controller('api/projects/:projectId/notifications/me')
export class NotificationsMeController {
  constructor(private readonly subscriptions: SubscriptionsRepository) {}

  @Get()
  @RequireProjectRole('VIEWER')
  @ApiOperation({
    summary: 'Which mails about this project the caller gets: run failed (gate FAILED), new failures',
  })
  @ApiOkResponse({ type: NotificationSubscriptionDto })
  get(
    @CurrentUser() user: AuthUser,
    @Param('projectId') projectId: string,
  ): Promise<NotificationSubscriptionDto> {
    return this.subscriptions.get(projectId, user.id);
  }

  @Put()
  @RequireProjectRole('VIEWER')
  @ApiOperation({ summary: 'Ask for or stop these mails (any member); a field left out keeps its value' })
  @ApiOkResponse({ type: NotificationSubscriptionDto })
  put(
    @CurrentUser() user: AuthUser,
    @Param('projectId') projectId: string,
    @Body() dto: PutSubscriptionDto,
  ): Promise<NotificationSubscriptionDto> {
    return this.subscriptions.put(projectId, user.id, dto);
  }
}
