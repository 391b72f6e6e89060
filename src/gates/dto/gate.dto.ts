import { ApiProperty } from '@nestjs/swagger';
import { CONDITION_NAMES, type ConditionName, GATE_STATUSES, type GateStatus } from '../gate-conditions.js';

export class GateConditionDto {
  @ApiProperty({ enum: CONDITION_NAMES, example: 'maxFailed' }) name: ConditionName;
  @ApiProperty({
    example: 0,
    description:
      'What the settings ask for: maxFailed the most FAILED + BROKEN results allowed, minPassRate the lowest percent ' +
      'passed of passed + failed + broken, minTotal the fewest tests that ran, noNewFailures 0',
  })
  expected: number;
  @ApiProperty({
    type: Number,
    nullable: true,
    example: 2,
    description:
      'What the run had, counting only results that count (see ignored); minTotal counts every test that ran. A pass rate is a percent floored to two decimals, null when no result that counts passed, failed or broke',
  })
  actual: number | null;
  @ApiProperty() passed: boolean;
}

export class GateIgnoredDto {
  @ApiProperty({
    description:
      'Results (passed, failed or broken) of quarantined tests left out (settings gate.ignoreQuarantined)',
  })
  quarantined: number;
  @ApiProperty({
    description:
      'Failures whose signature has an issue or a triage other than TO_INVESTIGATE left out (gate.ignoreKnownIssues)',
  })
  knownIssues: number;
}

export class GateDto {
  @ApiProperty({
    enum: GATE_STATUSES,
    description:
      'FAILED when a condition does not hold, else PASSED; PENDING while the run is in progress (and until its ' +
      'finish is evaluated); OFF when the project disabled the gate',
  })
  status: GateStatus;
  @ApiProperty({
    type: String,
    nullable: true,
    description: 'When the verdict was reached; null while PENDING',
  })
  evaluatedAt: string | null;
  @ApiProperty({
    type: [GateConditionDto],
    description: 'The conditions the settings set (a null threshold, or noNewFailures false, is not checked)',
  })
  conditions: GateConditionDto[];
  @ApiProperty({ type: GateIgnoredDto }) ignored: GateIgnoredDto;
}
