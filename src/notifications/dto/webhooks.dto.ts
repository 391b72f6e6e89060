import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, ArrayNotEmpty, IsArray, IsBoolean, IsIn, IsString } from 'class-validator';
import { MaxChars, OmittableNotNull } from '../../common/formats.js';
import { PageQueryDto } from '../../common/paging/page-query.dto.js';
import { NOTIFICATION_TYPES } from '../notification.events.js';

export const WEBHOOK_FORMATS = ['standard', 'slack'] as const;

export class CreateWebhookDto {
  @ApiProperty({
    example: 'https://ci.example.com/hooks/tms',
    description:
      'http or https; its host must not resolve to a loopback, private, link-local or metadata address',
  })
  @IsString({ message: 'url must be a string' })
  @MaxChars(2000, { message: 'url must be at most 2000 characters' })
  url: string;

  @ApiProperty({ enum: NOTIFICATION_TYPES, isArray: true, example: ['run.finished', 'run.failed'] })
  @IsArray({ message: 'events must be a list of event names' })
  @ArrayNotEmpty({ message: 'events must list at least one event' })
  @ArrayMaxSize(NOTIFICATION_TYPES.length, {
    message: `events lists at most ${NOTIFICATION_TYPES.length} events`,
  })
  @IsString({ each: true, message: 'events must be a list of event names' })
  events: string[];

  @ApiPropertyOptional({
    enum: WEBHOOK_FORMATS,
    default: 'standard',
    description: 'slack: a Slack incoming-webhook message, unsigned',
  })
  @OmittableNotNull()
  @IsIn(WEBHOOK_FORMATS, { message: 'format must be standard or slack' })
  format?: 'standard' | 'slack';

  @ApiPropertyOptional({ default: true })
  @OmittableNotNull()
  @IsBoolean({ message: 'active must be true or false' })
  active?: boolean;
}

export class UpdateWebhookDto {
  @ApiPropertyOptional()
  @OmittableNotNull()
  @IsString({ message: 'url must be a string' })
  @MaxChars(2000, { message: 'url must be at most 2000 characters' })
  url?: string;

  @ApiPropertyOptional({ enum: NOTIFICATION_TYPES, isArray: true })
  @OmittableNotNull()
  @IsArray({ message: 'events must be a list of event names' })
  @ArrayNotEmpty({ message: 'events must list at least one event' })
  @ArrayMaxSize(NOTIFICATION_TYPES.length, {
    message: `events lists at most ${NOTIFICATION_TYPES.length} events`,
  })
  @IsString({ each: true, message: 'events must be a list of event names' })
  events?: string[];

  @ApiPropertyOptional({ enum: WEBHOOK_FORMATS })
  @OmittableNotNull()
  @IsIn(WEBHOOK_FORMATS, { message: 'format must be standard or slack' })
  format?: 'standard' | 'slack';

  @ApiPropertyOptional({
    description: 'true turns a webhook that was turned off (410, 24 h of failures) on again',
  })
  @OmittableNotNull()
  @IsBoolean({ message: 'active must be true or false' })
  active?: boolean;
}

export class LastDeliveryDto {
  @ApiProperty({ enum: ['PENDING', 'DELIVERED', 'FAILED'] })
  status: string;

  @ApiProperty({ type: Number, nullable: true })
  statusCode: number | null;

  @ApiProperty()
  at: string;
}

export class WebhookDto {
  @ApiProperty({ example: 7 })
  id: number;

  @ApiProperty({ example: 5 })
  projectId: number;

  @ApiProperty({ example: 'https://ci.example.com/hooks/tms' })
  url: string;

  @ApiProperty({ enum: NOTIFICATION_TYPES, isArray: true })
  events: string[];

  @ApiProperty({ enum: WEBHOOK_FORMATS })
  format: 'standard' | 'slack';

  @ApiProperty()
  active: boolean;

  @ApiProperty({
    type: String,
    nullable: true,
    description: 'Why the service turned it off (410, 24 h of failures)',
  })
  deactivatedReason: string | null;

  @ApiProperty({ type: LastDeliveryDto, nullable: true, description: 'The latest delivery attempted' })
  lastDelivery: LastDeliveryDto | null;

  @ApiProperty()
  createdAt: string;
}

export class CreatedWebhookDto extends WebhookDto {
  @ApiProperty({
    example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
    description: 'The signing secret: shown this once',
  })
  secret: string;
}

export class DeliveryDto {
  @ApiProperty({ example: 31 })
  id: number;

  @ApiProperty({ enum: NOTIFICATION_TYPES })
  event: string;

  @ApiProperty({ enum: ['PENDING', 'DELIVERED', 'FAILED'] })
  status: 'PENDING' | 'DELIVERED' | 'FAILED';

  @ApiProperty({ description: 'Attempts made so far (at most 8 a delivery)' })
  attempts: number;

  @ApiProperty({
    type: Number,
    nullable: true,
    description: "The receiver's HTTP status at the last attempt",
  })
  lastStatusCode: number | null;

  @ApiProperty({ type: String, nullable: true })
  lastError: string | null;

  @ApiProperty({ type: String, nullable: true, description: 'When the next attempt is due (PENDING only)' })
  nextAttemptAt: string | null;

  @ApiProperty()
  createdAt: string;

  @ApiProperty({ type: String, nullable: true })
  deliveredAt: string | null;
}

export class WebhooksQueryDto extends PageQueryDto {}

export class NotificationSubscriptionDto {
  @ApiProperty({ description: 'Mail me when a run fails its quality gate' })
  runFailed: boolean;

  @ApiProperty({ description: 'Mail me when a run brings new failures' })
  newFailures: boolean;
}

export class PutSubscriptionDto {
  @ApiPropertyOptional()
  @OmittableNotNull()
  @IsBoolean({ message: 'runFailed must be true or false' })
  runFailed?: boolean;

  @ApiPropertyOptional()
  @OmittableNotNull()
  @IsBoolean({ message: 'newFailures must be true or false' })
  newFailures?: boolean;
}
