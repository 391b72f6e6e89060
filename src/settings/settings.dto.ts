import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';

/** API.md, "Project settings": the documented shape (the body is validated whole in project-settings.ts). */
export class FlakySettingsDto {
  @ApiProperty({
    example: 30,
    minimum: 2,
    maximum: 500,
    description:
      'The last runs in which a test ran that its flakiness is judged over. A change reaches each test at its next result; a larger window fills with the runs that follow',
  })
  window: number;
  @ApiProperty({
    example: 5,
    minimum: 2,
    maximum: 500,
    description: 'Runs needed for the flip-rate rule; at most window',
  })
  minRuns: number;
  @ApiProperty({
    example: 0.2,
    minimum: 0,
    maximum: 1,
    description: 'Flip rate at or above which a test is flaky',
  })
  flipRate: number;
  @ApiProperty({ example: false, description: 'Quarantine a test when it becomes flaky' })
  autoQuarantine: boolean;
  @ApiProperty({
    example: 10,
    minimum: 1,
    maximum: 100,
    description: 'Consecutive passing runs after which an automatic quarantine ends',
  })
  releaseAfterPasses: number;
}

export class GateSettingsDto {
  @ApiProperty({ example: true }) enabled: boolean;
  @ApiProperty({ type: Number, nullable: true, example: 0 }) maxFailed: number | null;
  @ApiProperty({ type: Number, nullable: true, example: null, minimum: 0, maximum: 100 }) minPassRate:
    number | null;
  @ApiProperty({ type: Number, nullable: true, example: null }) minTotal: number | null;
  @ApiProperty({ example: false }) noNewFailures: boolean;
  @ApiProperty({ example: true }) ignoreQuarantined: boolean;
  @ApiProperty({ example: true }) ignoreKnownIssues: boolean;
}

export class TriageSettingsDto {
  @ApiProperty({ example: 0.8, minimum: 0, maximum: 1 }) similarity: number;
}

export class RetentionSettingsDto {
  @ApiProperty({ type: Number, nullable: true, example: null }) keepDays: number | null;
  @ApiProperty({ type: Number, nullable: true, example: null }) keepRuns: number | null;
}

export class StreamsSettingsDto {
  @ApiProperty({
    type: [String],
    example: ['branch', 'env'],
    description: 'Attributes whose values (those a run has) follow its name in its default stream',
  })
  attributes: string[];
  @ApiProperty({
    type: String,
    nullable: true,
    example: null,
    description:
      "The stream of the project's latestRun; null: the one with the most runs in the last 30 days",
  })
  default: string | null;
}

export class ProjectSettingsDto {
  @ApiProperty({ type: FlakySettingsDto }) flaky: FlakySettingsDto;
  @ApiProperty({ type: GateSettingsDto }) gate: GateSettingsDto;
  @ApiProperty({ type: TriageSettingsDto }) triage: TriageSettingsDto;
  @ApiProperty({ type: RetentionSettingsDto }) retention: RetentionSettingsDto;
  @ApiProperty({ type: StreamsSettingsDto }) streams: StreamsSettingsDto;
}

/** Any subset of the groups, each any subset of its fields. */
export class ProjectSettingsPatchDto {
  @ApiPropertyOptional({ type: FlakySettingsDto }) flaky?: Partial<FlakySettingsDto>;
  @ApiPropertyOptional({ type: GateSettingsDto }) gate?: Partial<GateSettingsDto>;
  @ApiPropertyOptional({ type: TriageSettingsDto }) triage?: Partial<TriageSettingsDto>;
  @ApiPropertyOptional({ type: RetentionSettingsDto, description: 'OWNER only' })
  retention?: Partial<RetentionSettingsDto>;
  @ApiPropertyOptional({ type: StreamsSettingsDto }) streams?: Partial<StreamsSettingsDto>;
}
