import { ApiProperty } from '@nestjs/swagger';
import { Matches } from 'class-validator';
import { IsEmailAddress, MaxChars } from './formats.js';
import { NO_CONTROL_CHARS } from './text.js';

/** A body with one email address: valid, one line (it ends up in mail headers), at most 320 characters. */
export class EmailDto {
  @ApiProperty({ example: 'grace@example.com' })
  @IsEmailAddress()
  @Matches(NO_CONTROL_CHARS, { message: 'email must be one line without control characters' })
  @MaxChars(320)
  email: string;
}
