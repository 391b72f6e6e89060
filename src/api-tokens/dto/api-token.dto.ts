import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString, Matches, MinLength } from 'class-validator';
import { IsStorableText, IsTimestamp, MaxChars, NoFormatCharacters } from '../../common/formats.js';

export class CreateApiTokenDto {
  @ApiProperty({ example: 'GitHub Actions', description: 'What the token is for' })
  @IsString()
  @MinLength(1, { message: 'name must not be empty' })
  @MaxChars(100)
  @Matches(/^[^\r\n\t]*$/, { message: 'name must be one line' })
  @IsStorableText()
  @NoFormatCharacters()
  name: string;

  @ApiPropertyOptional({
    example: '2027-01-01T00:00:00.000Z',
    description: 'When the token stops working; never when absent',
  })
  @IsOptional()
  @IsTimestamp()
  expiresAt?: string;
}

export class ApiTokenDto {
  @ApiProperty({ example: 3 })
  id: number;

  @ApiProperty({ example: 'GitHub Actions' })
  name: string;

  @ApiProperty({ example: 'tms_Xq3vA9', description: 'The first characters of the token' })
  prefix: string;

  @ApiProperty({ example: '2026-11-22T10:15:00.000Z' })
  createdAt: string;

  @ApiProperty({ type: String, nullable: true, description: 'Updated at most once a minute' })
  lastUsedAt: string | null;

  @ApiProperty({ type: String, nullable: true })
  expiresAt: string | null;
}

export class CreatedApiTokenDto {
  @ApiProperty({ example: 3 })
  id: number;

  @ApiProperty({ example: 'GitHub Actions' })
  name: string;

  @ApiProperty({ description: 'The token itself: shown this once, stored only as a hash' })
  token: string;

  @ApiProperty({ example: 'tms_Xq3vA9' })
  prefix: string;

  @ApiProperty({ example: '2026-11-22T10:15:00.000Z' })
  createdAt: string;

  @ApiProperty({ type: String, nullable: true })
  expiresAt: string | null;
}
