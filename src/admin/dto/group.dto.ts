import { ApiProperty } from '@nestjs/swagger';
import { IsIn, IsString, ValidateBy } from 'class-validator';
import { NoFormatCharacters } from '../../common/formats.js';
import { PROJECT_ROLES } from '../../access/roles.js';
import type { ProjectRole } from '../../access/roles.js';

export const MAX_BINDINGS = 1000;
export const MAX_GROUP_NAME = 200;

/** Why a string is no acceptable group name, or undefined when it is one. */
function groupNameProblem(name: string): string | undefined {
  if (!name.length) {
    return 'name must not be empty';
  }
  // Counted in code points, as PostgreSQL counts varchar(200).
  if ([...name].length > MAX_GROUP_NAME) {
    return `name must be at most ${MAX_GROUP_NAME} characters`;
  }
  if (/[\p{Cc}\p{Cs}]/u.test(name)) {
    return 'name must not contain control characters';
  }
  return /\S/.test(name) ? undefined : 'name must not be blank';
}

/** One constraint with one precise message (non-strings are left to @IsString). */
const IsGroupName = (): PropertyDecorator =>
  ValidateBy({
    name: 'isGroupName',
    validator: {
      validate: (value: unknown) => typeof value !== 'string' || !groupNameProblem(value),
      defaultMessage: (args) => groupNameProblem(String(args?.value)) ?? 'name is invalid',
    },
  });

/** One constraint, so a wrong value gets one message rather than one per bound. */
const IsPositiveId = (): PropertyDecorator =>
  ValidateBy({
    name: 'isPositiveId',
    validator: {
      validate: (value: unknown) => typeof value === 'number' && Number.isSafeInteger(value) && value >= 1,
      defaultMessage: (args) => `${args?.property ?? 'id'} must be a positive integer`,
    },
  });

export class CreateGroupDto {
  @ApiProperty({
    example: 'QA',
    minLength: 1,
    maxLength: MAX_GROUP_NAME,
    description:
      'Unique, exact and case-sensitive ("QA" and "qa" are two groups): directory groups map onto groups by this ' +
      'name. Stored as given, never trimmed; control characters and invisible formatting characters are refused.',
  })
  @IsString({ message: 'name must be a string' })
  @IsGroupName()
  @NoFormatCharacters()
  name: string;
}

/** One project role granted to every member of a group. */
export class GroupBindingDto {
  @ApiProperty({ example: 12, minimum: 1 })
  @IsPositiveId()
  projectId: number;

  @ApiProperty({ enum: PROJECT_ROLES, example: 'REPORTER' })
  @IsIn(PROJECT_ROLES, { message: `role must be one of: ${PROJECT_ROLES.join(', ')}` })
  role: ProjectRole;
}

export class CreatedGroupDto {
  @ApiProperty({ example: 4 })
  id: number;

  @ApiProperty({ example: 'QA' })
  name: string;

  @ApiProperty({ type: [GroupBindingDto], example: [] })
  bindings: GroupBindingDto[];
}

export class GroupDto extends CreatedGroupDto {
  @ApiProperty({ example: 5, description: 'Distinct users in the group, manual and directory-synced' })
  memberCount: number;
}

export class GroupSummaryDto {
  @ApiProperty({ example: 4 })
  id: number;

  @ApiProperty({ example: 'QA' })
  name: string;

  @ApiProperty({ example: 5, description: 'Distinct users in the group, manual and directory-synced' })
  memberCount: number;
}

export class GroupMemberDto {
  @ApiProperty({ example: 42 })
  userId: number;

  @ApiProperty({ example: 'ada@example.com' })
  email: string;

  @ApiProperty({ example: 'Ada Lovelace' })
  fullName: string;

  @ApiProperty({
    enum: ['MANUAL', 'DIRECTORY'],
    description:
      'MANUAL: added in Admin -> Groups. DIRECTORY: synced at directory sign-in (replaced at each one).',
  })
  source: 'MANUAL' | 'DIRECTORY';
}
