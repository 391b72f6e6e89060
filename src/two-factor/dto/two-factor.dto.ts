import { ApiProperty } from '@nestjs/swagger';
import { IsString, Matches, MinLength } from 'class-validator';
import { MaxChars } from '../../common/formats.js';

export class EnrollmentDto {
  @ApiProperty({ description: 'The TOTP secret in base32 (160 bits), for typing into an authenticator app' })
  secret: string;

  @ApiProperty({
    example: 'otpauth://totp/TMS:ada%40example.com?secret=…&issuer=TMS&algorithm=SHA1&digits=6&period=30',
  })
  otpauthUrl: string;

  @ApiProperty({ description: 'The otpauth URL as a QR code, a data:image/png;base64 URL for an <img>' })
  qrCodeDataUrl: string;

  @ApiProperty({
    type: [String],
    example: ['7K2QD-M9XTA'],
    description: 'Ten one-time codes; shown this once',
  })
  recoveryCodes: string[];
}

export class TwoFactorCodeDto {
  @ApiProperty({ example: '123456', description: 'The current 6-digit code of the authenticator app' })
  @IsString()
  @Matches(/^\d{6}$/, { message: 'code must be the 6-digit code of the authenticator app' })
  code: string;
}

export class TwoFactorVerifyDto {
  @ApiProperty({ description: 'The challengeToken of the password step' })
  @IsString()
  @MinLength(1, { message: 'challengeToken must not be empty' })
  @MaxChars(200)
  challengeToken: string;

  @ApiProperty({ example: '123456', description: 'The 6-digit code, or one unused recovery code' })
  @IsString()
  @MinLength(1, { message: 'code must not be empty' })
  @MaxChars(64)
  code: string;
}

export class TwoFactorChallengeDto {
  @ApiProperty({ enum: [true] })
  twoFactorRequired: true;

  @ApiProperty({ description: 'Send it with the code to POST /api/auth/2fa/verify; it grants nothing else' })
  challengeToken: string;

  @ApiProperty({ example: 300, description: 'Seconds the challenge stays valid' })
  expiresIn: number;
}

export class TwoFactorStatusDto {
  @ApiProperty()
  enabled: boolean;

  @ApiProperty({ description: 'An enrolment was started and waits for its first code' })
  pending: boolean;

  @ApiProperty({ example: 10 })
  recoveryCodesRemaining: number;
}
