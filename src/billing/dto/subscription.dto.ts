import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsInt, IsISO8601, IsOptional, IsString, Matches, Max, Min } from 'class-validator';
import { IsStorableText, MaxChars } from '../../common/formats.js';
import { NO_CONTROL_CHARS } from '../../common/text.js';

export const SUBSCRIPTION_STATUSES = ['TRIAL', 'ACTIVE', 'PAST_DUE', 'EXPIRED'] as const;
export type SubscriptionStatus = (typeof SUBSCRIPTION_STATUSES)[number];

export const BILLING_EVENT_TYPES = ['payment.succeeded', 'payment.failed', 'subscription.renewed', 'subscription.expired'] as const;
export type BillingEventType = (typeof BILLING_EVENT_TYPES)[number];

const PLAN = /^[A-Za-z0-9][A-Za-z0-9 _.-]{0,39}$/;

export class SubscriptionDto {
  @ApiProperty({ example: 'TEAM' })
  plan: string;

  @ApiProperty({ example: 25 })
  seats: number;

  @ApiProperty({ example: 12, description: 'Enabled accounts that can sign in' })
  seatsUsed: number;

  @ApiProperty({ example: '2026-12-22T00:00:00.000Z' })
  periodEnd: string;

  @ApiProperty({ enum: SUBSCRIPTION_STATUSES })
  status: SubscriptionStatus;
}

export class UpdateSubscriptionDto {
  @ApiPropertyOptional({ example: 'TEAM' })
  @IsOptional()
  @IsString()
  @Matches(PLAN, { message: 'plan must be 1 to 40 letters, digits, spaces, dots, dashes or underscores' })
  plan?: string;

  @ApiPropertyOptional({ minimum: 0, maximum: 1_000_000 })
  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(1_000_000)
  seats?: number;

  @ApiPropertyOptional({ example: '2026-12-22T00:00:00.000Z' })
  @IsOptional()
  @IsISO8601({ strict: true }, { message: 'periodEnd must be an ISO 8601 timestamp' })
  periodEnd?: string;

  @ApiPropertyOptional({ enum: SUBSCRIPTION_STATUSES, description: 'A change sends the billing notice that goes with it' })
  @IsOptional()
  @IsIn(SUBSCRIPTION_STATUSES, { message: `status must be one of: ${SUBSCRIPTION_STATUSES.join(', ')}` })
  status?: SubscriptionStatus;
}

/** What a billing provider posts to /api/billing/events, signed with SVC_BILLING_WEBHOOK_SECRET. */
export class BillingEventDto {
  @ApiProperty({ enum: BILLING_EVENT_TYPES })
  @IsIn(BILLING_EVENT_TYPES, { message: `type must be one of: ${BILLING_EVENT_TYPES.join(', ')}` })
  type: BillingEventType;

  @ApiPropertyOptional({ description: "The provider's event id; a repeated id is acknowledged and ignored" })
  @IsOptional()
  @IsString()
  @MaxChars(200)
  @IsStorableText()
  id?: string;

  @ApiPropertyOptional({ description: 'New end of the paid period (renewal, payment)' })
  @IsOptional()
  @IsISO8601({ strict: true }, { message: 'periodEnd must be an ISO 8601 timestamp' })
  periodEnd?: string;

  @ApiPropertyOptional({ example: '49.00 EUR' })
  @IsOptional()
  @IsString()
  @MaxChars(40)
  @Matches(NO_CONTROL_CHARS, { message: 'amount must be one line' })
  @IsStorableText()
  amount?: string;

  @ApiPropertyOptional()
  @IsOptional()
  @IsString()
  @MaxChars(100)
  @Matches(NO_CONTROL_CHARS, { message: 'invoiceId must be one line' })
  @IsStorableText()
  invoiceId?: string;

  @ApiPropertyOptional({ description: 'Why a payment failed' })
  @IsOptional()
  @IsString()
  @MaxChars(200)
  @Matches(NO_CONTROL_CHARS, { message: 'reason must be one line' })
  @IsStorableText()
  reason?: string;
}
