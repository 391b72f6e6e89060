import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional, Matches } from 'class-validator';
import { PageQueryDto } from '../../common/paging/page-query.dto.js';
import { AUDIT_TYPES } from '../audit.events.js';
import { IsTimestamp } from '../../common/formats.js';

export class AuditEventDto {
  @ApiProperty({ example: 12 })
  id: number;

  @ApiProperty({ example: '2026-11-22T10:15:00.000Z' })
  at: string;

  @ApiProperty({ enum: AUDIT_TYPES })
  type: string;

  @ApiProperty({ type: Number, nullable: true })
  actorId: number | null;

  @ApiProperty({
    type: String,
    nullable: true,
    description:
      "The actor's email when the event happened (or, for events recorded without it, the user's current one)",
  })
  actorEmail: string | null;

  @ApiProperty({ type: String, nullable: true, description: "The client's address" })
  ip: string | null;

  @ApiProperty({
    type: String,
    nullable: true,
    description: 'What the event concerns (an endpoint, a user, ...)',
  })
  target: string | null;

  @ApiProperty({
    type: String,
    nullable: true,
    example: 'Web shop',
    description:
      "The target as people know it: a project's or group's name, a user's email; `project #1 (deleted)` when " +
      'it no longer exists; null for other targets (an endpoint, the subscription)',
  })
  targetLabel: string | null;

  @ApiProperty({ type: 'object', additionalProperties: true })
  details: Record<string, unknown>;
}

/** Page query plus filters; sortable on `at`, `id`, `type` (default newest first). */
export class AuditQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ enum: AUDIT_TYPES })
  @IsOptional()
  @IsIn(AUDIT_TYPES, { message: `type must be one of: ${AUDIT_TYPES.join(', ')}` })
  type?: string;

  @ApiPropertyOptional({ description: 'Only events of this user id' })
  @IsOptional()
  @Matches(/^\d{1,19}$/, { message: 'actorId must be a numeric id' })
  actorId?: string;

  @ApiPropertyOptional({ description: 'From this instant (inclusive), ISO 8601' })
  @IsOptional()
  @IsTimestamp()
  from?: string;

  @ApiPropertyOptional({ description: 'Until this instant (exclusive), ISO 8601' })
  @IsOptional()
  @IsTimestamp()
  to?: string;
}
