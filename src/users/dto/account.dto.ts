import { ApiProperty } from '@nestjs/swagger';
import { IsString, Matches, MinLength } from 'class-validator';
import { IsStorableText, MaxChars, NoFormatCharacters } from '../../common/formats.js';
import { EmailDto } from '../../common/email.dto.js';
import { NO_CONTROL_CHARS } from '../../common/text.js';

export class RegisterDto extends EmailDto {
  @ApiProperty({ example: 'Grace Hopper' })
  @IsString()
  @MinLength(1, { message: 'fullName must not be empty' })
  @MaxChars(200)
  @Matches(NO_CONTROL_CHARS, { message: 'fullName must be one line without control characters' })
  @IsStorableText()
  @NoFormatCharacters()
  fullName: string;
}

export class TokenPasswordDto {
  @ApiProperty({ description: 'The token from the link in the email' })
  @IsString()
  @MinLength(20)
  @MaxChars(200)
  token: string;

  @ApiProperty({ description: '12 to 256 characters, not the email address', format: 'password' })
  @IsString()
  password: string;
}

export class AcceptedDto {
  @ApiProperty({ example: 'If the address can be used, an email is on its way' })
  message: string;
}
