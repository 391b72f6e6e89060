import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional, IsString, Matches, MinLength } from 'class-validator';
import { IsStorableText, MaxChars, NoFormatCharacters } from '../../common/formats.js';
import { EmailDto } from '../../common/email.dto.js';
import { NO_CONTROL_CHARS } from '../../common/text.js';
import { PROJECT_ROLES } from '../roles.js';
import type { ProjectRole } from '../roles.js';

export class WorkspaceInvitationDto extends EmailDto {}

export class ProjectInvitationDto extends WorkspaceInvitationDto {
  @ApiProperty({ enum: PROJECT_ROLES })
  @IsIn(PROJECT_ROLES, { message: `role must be one of: ${PROJECT_ROLES.join(', ')}` })
  role: ProjectRole;
}

export class AcceptInvitationDto {
  @ApiProperty({ description: 'The token from the invitation email' })
  @IsString()
  @MinLength(20)
  @MaxChars(200)
  token: string;

  @ApiPropertyOptional({ description: 'Needed when the invitation creates a new account' })
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxChars(200)
  @Matches(NO_CONTROL_CHARS, { message: 'fullName must be one line' })
  @IsStorableText()
  @NoFormatCharacters()
  fullName?: string;

  @ApiPropertyOptional({
    description: 'Needed when the invitation creates a new account: 12 to 256 characters',
    format: 'password',
  })
  @IsOptional()
  @IsString()
  password?: string;
}

export class InvitationAcceptedDto {
  @ApiProperty()
  userId: number;

  @ApiProperty()
  email: string;

  @ApiProperty({ type: Number, nullable: true })
  projectId: number | null;

  @ApiProperty({ enum: PROJECT_ROLES, nullable: true })
  role: ProjectRole | null;

  @ApiProperty({ description: 'Whether a local account was created' })
  accountCreated: boolean;
}

export class AcceptedMessageDto {
  @ApiProperty({ example: 'Invitation sent to grace@example.com' })
  message: string;
}
