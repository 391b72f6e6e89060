import { Body, Controller, Get, Headers, HttpCode, Post, Put, Req } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBearerAuth,
  ApiBody,
  ApiForbiddenResponse,
  ApiHeader,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import type { Request } from 'express';
import type { AuthUser } from '../common/auth-user.js';
import { AdminOnly, ClientIp, CurrentUser, Public } from '../common/decorators.js';
import { ErrorBody } from '../common/error-body.js';
import { createValidationPipe } from '../common/validation.js';
import { BillingService } from './billing.service.js';
import { BillingEventDto, SubscriptionDto, UpdateSubscriptionDto } from './dto/subscription.dto.js';

const validate = createValidationPipe();

@ApiTags('Billing')
@Controller()
export class BillingController {
  constructor(private readonly billing: BillingService) {}

  @Get('api/admin/subscription')
  @AdminOnly()
  @ApiBearerAuth()
  @ApiOperation({ summary: 'The workspace subscription: plan, seats, seats in use, period end, status' })
  @ApiOkResponse({ type: SubscriptionDto })
  @ApiForbiddenResponse({ type: ErrorBody, description: 'Not a platform administrator' })
  get(): Promise<SubscriptionDto> {
    return this.billing.get();
  }

  @Put('api/admin/subscription')
  @AdminOnly()
  @ApiBearerAuth()
  @ApiOperation({
    summary: 'Change the subscription',
    description:
      'A status change sends its notice to the platform admins: PAST_DUE payment failed, ACTIVE payment received, EXPIRED subscription expired.',
  })
  @ApiOkResponse({ type: SubscriptionDto })
  @ApiBadRequestResponse({ type: ErrorBody })
  @ApiForbiddenResponse({ type: ErrorBody, description: 'Not a platform administrator' })
  update(@Body() dto: UpdateSubscriptionDto, @CurrentUser() user: AuthUser, @ClientIp() ip: string): Promise<SubscriptionDto> {
    return this.billing.update(dto, user, ip);
  }

  @Public()
  @Post('api/billing/events')
  @HttpCode(204)
  @ApiOperation({
    summary: "A billing provider's event",
    description:
      'Authenticated by `X-Signature`: the hex HMAC-SHA256 of the raw body with SVC_BILLING_WEBHOOK_SECRET (a `sha256=` prefix is accepted). A repeated event `id` is acknowledged and ignored.',
  })
  @ApiHeader({ name: 'X-Signature', required: true })
  @ApiBody({ type: BillingEventDto })
  @ApiNoContentResponse()
  @ApiUnauthorizedResponse({ type: ErrorBody, description: 'Missing or wrong signature, or no secret configured' })
  @ApiBadRequestResponse({ type: ErrorBody })
  async event(@Req() req: Request & { rawBody?: Buffer }, @Headers('x-signature') signature?: string): Promise<void> {
    this.billing.verifySignature(req.rawBody, signature);
    const event = (await validate.transform(req.body, { type: 'body', metatype: BillingEventDto })) as BillingEventDto;
    await this.billing.handleEvent(event);
  }
}
