import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsOptional, IsString, Matches, Validate } from 'class-validator';
import { IsStorableText, MaxChars, NoFormatCharacters } from '../../common/formats.js';
import { NO_CONTROL_CHARS } from '../../common/text.js';
import { IsAttributes, IsStream, ownEntries, RunCountsDto } from '../../results/dto/results.dto.js';

/** `attributes` comes as JSON text in the query; anything that is not a JSON object is left for the validator. */
function parseAttributes({ value }: { value: unknown }): unknown {
  if (typeof value !== 'string') {
    return value;
  }
  try {
    const parsed: unknown = JSON.parse(value);
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
      return value;
    }
    return ownEntries(parsed);
  } catch {
    return value;
  }
}

export class ImportQueryDto {
  @ApiProperty({ example: '7', description: 'The project the run goes to (REPORTER needed)' })
  @IsString()
  @Matches(/^\d{1,18}$/, { message: 'projectId must be a project id' })
  projectId: string;

  @ApiPropertyOptional({
    example: 'nightly #512',
    description: 'Default: the first file name and the time of the import',
  })
  @IsOptional()
  @Transform(({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value))
  @IsString()
  @Matches(/\S/, { message: 'runName must not be blank' })
  @MaxChars(500)
  @Matches(NO_CONTROL_CHARS, { message: 'runName must be one line without control characters' })
  @NoFormatCharacters()
  @IsStorableText()
  runName?: string;

  @ApiPropertyOptional({
    example: '{"branch":"main","commit":"4f2a9c1"}',
    description: "The run's attributes, as a JSON object of strings (URL-encoded)",
  })
  @IsOptional()
  @Transform(parseAttributes)
  @Validate(IsAttributes)
  attributes?: Record<string, string>;

  @AttributeParameter('branch', 'main', 'The branch the report is of')
  branch?: string;

  @AttributeParameter('commit', '4f2a9c1', 'The commit the report is of')
  commit?: string;

  @AttributeParameter('env', 'staging', 'The environment the report is of')
  env?: string;

  @ApiPropertyOptional({
    example: 'nightly · main',
    description: "The run's stream (API.md, \"Streams\"); default: the rule's, from the run's name and attributes",
  })
  @IsOptional()
  @Validate(IsStream)
  stream?: string;
}

/** A run attribute given as its own query parameter (branch, commit, env): one line, trimmed. */
function AttributeParameter(name: string, example: string, what: string): PropertyDecorator {
  const decorators = [
    ApiPropertyOptional({
      example,
      description: `${what}: the run attribute \`${name}\` (over one of \`attributes\`)`,
    }),
    IsOptional(),
    Transform(({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value)),
    IsString(),
    Matches(/\S/, { message: `${name} must not be blank` }),
    MaxChars(1000),
    Matches(NO_CONTROL_CHARS, { message: `${name} must be one line without control characters` }),
    IsStorableText(),
  ];
  return (target, key) => decorators.forEach((d) => d(target, key));
}

export class ImportResultDto {
  @ApiProperty({ example: 42 }) runId: number;
  @ApiProperty({
    example: 'junit',
    description: 'The format read; with auto, the one detected ("mixed" for several)',
  })
  format: string;
  @ApiProperty({ type: RunCountsDto }) counts: RunCountsDto;
  @ApiProperty({
    type: [String],
    example: ['2 retries merged into their test cases (Surefire flakyFailure/rerunFailure)'],
    description:
      'What was skipped, merged or cut: zip members that are not reports, unknown statuses, retries, long text',
  })
  warnings: string[];
}
