import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsOptional, IsString, ValidateIf } from 'class-validator';
import { IsStorableText, MaxChars } from '../../common/formats.js';
import { PageQueryDto } from '../../common/paging/page-query.dto.js';

export class AdminUserDto {
  @ApiProperty({ example: 7 })
  id: number;

  @ApiProperty({ example: 'ada@example.com' })
  email: string;

  @ApiProperty({ example: 'Ada Lovelace' })
  fullName: string;

  @ApiProperty({ description: 'Platform administrator' })
  admin: boolean;

  @ApiProperty({ description: 'A disabled account cannot sign in and its credentials stop working' })
  enabled: boolean;

  @ApiProperty({ enum: ['LOCAL', 'LDAP'] })
  authSource: 'LOCAL' | 'LDAP';

  @ApiProperty()
  emailVerified: boolean;

  @ApiProperty({ example: '2026-11-22T10:15:00.000Z' })
  createdAt: string;
}

/** Page query plus `q`; sortable on `id`, `email`, `fullName`, `createdAt` (default `id,asc`). */
export class AdminUsersQueryDto extends PageQueryDto {
  @ApiPropertyOptional({
    description: 'Case-insensitive substring of the email address or the full name',
    maxLength: 200,
  })
  @IsOptional()
  @IsString({ message: 'q must be a single string' })
  @MaxChars(200, { message: 'q must be at most 200 characters' })
  @IsStorableText()
  q?: string;
}

/** Absent fields stay as they are; `null` is refused rather than read as "unchanged". */
export class UpdateUserDto {
  @ApiPropertyOptional({ description: 'Grant or remove platform administration' })
  @ValidateIf((_: unknown, value: unknown) => value !== undefined)
  @IsBoolean({ message: 'admin must be true or false' })
  admin?: boolean;

  @ApiPropertyOptional({
    description:
      'false disables the account: its sessions (refresh tokens) are revoked and its API tokens deleted',
  })
  @ValidateIf((_: unknown, value: unknown) => value !== undefined)
  @IsBoolean({ message: 'enabled must be true or false' })
  enabled?: boolean;
}
