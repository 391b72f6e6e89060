import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsNotEmpty, IsOptional, IsString, Matches } from 'class-validator';
import { IsStorableText, IsTimestamp, MaxChars, NoFormatCharacters } from '../../common/formats.js';

/** PUT /api/projects/{id}/tests/{testId}/quarantine */
export class QuarantineTestDto {
  @ApiProperty({ example: 'Fails on the shared staging database; tracked in OPS-112', maxLength: 1000 })
  @IsString({ message: 'reason must be a string' })
  @IsNotEmpty({ message: 'reason must not be empty' })
  @Matches(/\S/, { message: 'reason must not be blank' })
  @MaxChars(1000)
  @IsStorableText()
  @NoFormatCharacters()
  reason: string;

  @ApiPropertyOptional({
    type: String,
    example: '2026-12-31T00:00:00.000Z',
    description: 'When the quarantine ends by itself (in the future); without it, it lasts until released',
  })
  @IsOptional()
  @IsTimestamp()
  until?: string;
}

/** One quarantined test, as a CI job reads it (GET /api/projects/{id}/quarantine). */
export class QuarantinedTestDto {
  @ApiProperty() testId: number;
  @ApiProperty() suite: string;
  @ApiProperty() name: string;
  @ApiProperty({ example: '2026-11-22T10:15:00.000Z' }) since: string;
  @ApiProperty() reason: string;
  @ApiProperty({ description: 'Quarantined automatically (flaky with `flaky.autoQuarantine` on)' })
  auto: boolean;
  @ApiProperty({ type: String, nullable: true, description: 'When it ends by itself' }) until: string | null;
}
