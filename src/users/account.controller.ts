import { Body, Controller, HttpCode, Post } from '@nestjs/common';
import {
  ApiAcceptedResponse,
  ApiBadRequestResponse,
  ApiNoContentResponse,
  ApiOperation,
  ApiTags,
  ApiTooManyRequestsResponse,
} from '@nestjs/swagger';
import { ClientIp, Public } from '../common/decorators.js';
import { ErrorBody } from '../common/error-body.js';
import { AccountService } from './account.service.js';
import { EmailDto } from '../common/email.dto.js';
import { AcceptedDto, RegisterDto, TokenPasswordDto } from './dto/account.dto.js';

@ApiTags('Authentication')
@Controller('api/auth')
export class AccountController {
  constructor(private readonly account: AccountService) {}

  @Public()
  @Post('register')
  @HttpCode(202)
  @ApiOperation({
    summary: 'Register: sends a verification email',
    description:
      'Always 202 with the same body, whether or not the address is known. A verified address gets a notice instead.',
  })
  @ApiAcceptedResponse({ type: AcceptedDto })
  @ApiBadRequestResponse({ type: ErrorBody, description: 'Malformed address or name (line breaks included)' })
  @ApiTooManyRequestsResponse({
    type: ErrorBody,
    description: '10 requests per minute per client; Retry-After: 60',
  })
  register(@Body() dto: RegisterDto): AcceptedDto {
    return this.account.register(dto);
  }

  @Public()
  @Post('verify-email')
  @HttpCode(204)
  @ApiOperation({
    summary: 'Confirm the address with the emailed token and set the password (token valid 24 h, once)',
  })
  @ApiNoContentResponse()
  @ApiBadRequestResponse({ type: ErrorBody, description: 'Invalid, expired or used token; weak password' })
  verifyEmail(@Body() dto: TokenPasswordDto, @ClientIp() ip: string): Promise<void> {
    return this.account.verifyEmail(dto, ip);
  }

  @Public()
  @Post('forgot-password')
  @HttpCode(202)
  @ApiOperation({
    summary: 'Send a password-reset email to a local account',
    description:
      'Always 202. At most 3 reset emails per address and hour; 10 requests per minute per client.',
  })
  @ApiAcceptedResponse({ type: AcceptedDto })
  @ApiTooManyRequestsResponse({ type: ErrorBody, description: 'Retry-After: 60' })
  forgotPassword(@Body() dto: EmailDto): AcceptedDto {
    return this.account.forgotPassword(dto.email);
  }

  @Public()
  @Post('reset-password')
  @HttpCode(204)
  @ApiOperation({
    summary: 'Set a new password with the emailed token (valid 1 h, once); signs out every session',
  })
  @ApiNoContentResponse()
  @ApiBadRequestResponse({ type: ErrorBody, description: 'Invalid, expired or used token; weak password' })
  resetPassword(@Body() dto: TokenPasswordDto, @ClientIp() ip: string): Promise<void> {
    return this.account.resetPassword(dto, ip);
  }
}
