import { ApiProperty } from '@nestjs/swagger';
import { IsString, MinLength } from 'class-validator';
import { IsStorableText, MaxChars } from '../../common/formats.js';

export class LoginDto {
  /** The email address (or, with directory login, the directory user name). */
  @ApiProperty({ example: 'ada@example.com' })
  @IsString()
  @MinLength(1, { message: 'username must not be empty' })
  @MaxChars(320)
  @IsStorableText()
  username: string;

  @ApiProperty({ example: 'correct horse battery staple', format: 'password' })
  @IsString()
  @MinLength(1, { message: 'password must not be empty' })
  @MaxChars(1024)
  password: string;
}
