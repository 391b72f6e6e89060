import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import {
  ApiAcceptedResponse,
  ApiBadRequestResponse,
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
import { RequireProjectRole } from '../access/project-role.guard.js';
import type { AuthUser } from '../common/auth-user.js';
import { ClientIp, CurrentUser } from '../common/decorators.js';
import { ErrorBody } from '../common/error-body.js';
import { PageOf } from '../common/paging/page.js';
import {
  CreatedWebhookDto,
  CreateWebhookDto,
  DeliveryDto,
  UpdateWebhookDto,
  WebhookDto,
  WebhooksQueryDto,
} from './dto/webhooks.dto.js';
import { WebhooksService } from './webhooks.service.js';

@ApiTags('Notifications')
@ApiBearerAuth()
@ApiNotFoundResponse({
  type: ErrorBody,
  description: 'No such project or webhook, or one the caller cannot see',
})
@ApiForbiddenResponse({ type: ErrorBody, description: 'Below MAINTAINER in the project' })
@Controller('api')
export class WebhooksController {
  constructor(private readonly webhooks: WebhooksService) {}

  @Post('projects/:projectId/webhooks')
  @RequireProjectRole('MAINTAINER')
  @ApiOperation({
    summary:
      'Add a webhook (MAINTAINER): its signing secret (whsec_…) is in this answer only. The URL must be http(s) and not resolve to a loopback, private, link-local or metadata address',
  })
  @ApiCreatedResponse({ type: CreatedWebhookDto })
  @ApiBadRequestResponse({
    type: ErrorBody,
    description: 'A bad or refused URL, an unknown event, no events',
  })
  create(
    @CurrentUser() user: AuthUser,
    @Param('projectId') projectId: string,
    @Body() dto: CreateWebhookDto,
    @ClientIp() ip: string,
  ): Promise<CreatedWebhookDto> {
    return this.webhooks.create(user, projectId, dto, ip);
  }

  @Get('projects/:projectId/webhooks')
  @RequireProjectRole('MAINTAINER')
  @ApiOperation({
    summary:
      "The project's webhooks (no secrets), with their latest delivery; sortable on id (default), createdAt",
  })
  @ApiOkResponse({ type: PageOf(WebhookDto) })
  list(@Param('projectId') projectId: string, @Query() query: WebhooksQueryDto) {
    return this.webhooks.list(projectId, query);
  }

  @Get('webhooks/:webhookId')
  @RequireProjectRole('MAINTAINER', 'webhookId')
  @ApiOperation({ summary: 'One webhook (no secret)' })
  @ApiOkResponse({ type: WebhookDto })
  get(@Param('webhookId') webhookId: string): Promise<WebhookDto> {
    return this.webhooks.get(webhookId);
  }

  @Patch('webhooks/:webhookId')
  @RequireProjectRole('MAINTAINER', 'webhookId')
  @ApiOperation({
    summary: 'Change a webhook: url, events, format, active (true turns one the service turned off on again)',
  })
  @ApiOkResponse({ type: WebhookDto })
  @ApiBadRequestResponse({ type: ErrorBody })
  update(
    @CurrentUser() user: AuthUser,
    @Param('webhookId') webhookId: string,
    @Body() dto: UpdateWebhookDto,
    @ClientIp() ip: string,
  ): Promise<WebhookDto> {
    return this.webhooks.update(user, webhookId, dto, ip);
  }

  @Delete('webhooks/:webhookId')
  @HttpCode(204)
  @RequireProjectRole('MAINTAINER', 'webhookId')
  @ApiOperation({ summary: 'Remove a webhook and its deliveries' })
  @ApiNoContentResponse()
  delete(
    @CurrentUser() user: AuthUser,
    @Param('webhookId') webhookId: string,
    @ClientIp() ip: string,
  ): Promise<void> {
    return this.webhooks.delete(user, webhookId, ip);
  }

  @Post('webhooks/:webhookId/test')
  @HttpCode(202)
  @RequireProjectRole('MAINTAINER', 'webhookId')
  @ApiOperation({ summary: 'Send a ping delivery now (whatever the events it lists)' })
  @ApiAcceptedResponse({ description: 'The ping is in the outbox; see its deliveries' })
  @ApiConflictResponse({ type: ErrorBody, description: 'The webhook is turned off' })
  test(@Param('webhookId') webhookId: string): Promise<void> {
    return this.webhooks.test(webhookId);
  }

  @Get('webhooks/:webhookId/deliveries')
  @RequireProjectRole('MAINTAINER', 'webhookId')
  @ApiOperation({ summary: "The webhook's deliveries, newest first; sortable on id, createdAt" })
  @ApiOkResponse({ type: PageOf(DeliveryDto) })
  deliveries(@Param('webhookId') webhookId: string, @Query() query: WebhooksQueryDto) {
    return this.webhooks.deliveries(webhookId, query);
  }

  @Post('webhooks/:webhookId/deliveries/:deliveryId/redeliver')
  @HttpCode(202)
  @RequireProjectRole('MAINTAINER', 'webhookId')
  @ApiOperation({
    summary: 'Send a delivery again, with a fresh set of 8 attempts and its original webhook-id',
  })
  @ApiAcceptedResponse({ description: 'Due again now' })
  redeliver(@Param('webhookId') webhookId: string, @Param('deliveryId') deliveryId: string): Promise<void> {
    return this.webhooks.redeliver(webhookId, deliveryId);
  }
}
