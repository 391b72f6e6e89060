import { Body, Controller, Get, Header, HttpCode, Post } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBearerAuth,
  ApiConflictResponse,
  ApiForbiddenResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
  ApiTooManyRequestsResponse,
} from '@nestjs/swagger';
import type { AuthUser } from '../common/auth-user.js';
import { ClientIp, CurrentUser, InteractiveOnly } from '../common/decorators.js';
import { ErrorBody } from '../common/error-body.js';
import { EnrollmentDto, TwoFactorCodeDto, TwoFactorStatusDto } from './dto/two-factor.dto.js';
import { TwoFactorService } from './two-factor.service.js';

/** Profile → Security: the signed-in user's own two-factor settings. The second login step is in AuthController. */
@ApiTags('Two-factor authentication')
@ApiBearerAuth()
@Controller('api/auth/2fa')
export class TwoFactorController {
  constructor(private readonly twoFactor: TwoFactorService) {}

  @Get()
  @ApiOperation({ summary: 'Whether two-factor is active or pending, and how many recovery codes are left' })
  @ApiOkResponse({ type: TwoFactorStatusDto })
  status(@CurrentUser() user: AuthUser): Promise<TwoFactorStatusDto> {
    return this.twoFactor.status(user.id);
  }

  @Post('enroll')
  @HttpCode(200)
  @InteractiveOnly()
  @Header('Cache-Control', 'no-store')
  @ApiOperation({
    summary: 'Start enrolment: a new secret, its QR code and 10 recovery codes',
    description:
      'Nothing is active until POST /api/auth/2fa/activate receives a valid code. Enrolling again replaces a pending enrolment.',
  })
  @ApiOkResponse({ type: EnrollmentDto })
  @ApiConflictResponse({ type: ErrorBody, description: 'Two-factor is already active' })
  @ApiForbiddenResponse({
    type: ErrorBody,
    description: 'API tokens cannot manage two-factor authentication',
  })
  @ApiTooManyRequestsResponse({ type: ErrorBody, description: '10 enrolments per hour; Retry-After: 60' })
  enroll(@CurrentUser() user: AuthUser): Promise<EnrollmentDto> {
    return this.twoFactor.enroll(user.id);
  }

  @Post('activate')
  @HttpCode(204)
  @InteractiveOnly()
  @ApiOperation({ summary: 'Activate the pending enrolment with the current 6-digit code' })
  @ApiNoContentResponse()
  @ApiBadRequestResponse({ type: ErrorBody, description: 'Wrong code, or no pending enrolment' })
  @ApiConflictResponse({ type: ErrorBody, description: 'Two-factor is already active' })
  @ApiForbiddenResponse({
    type: ErrorBody,
    description: 'API tokens cannot manage two-factor authentication',
  })
  @ApiTooManyRequestsResponse({ type: ErrorBody, description: '5 codes per minute; Retry-After: 60' })
  async activate(
    @CurrentUser() user: AuthUser,
    @Body() dto: TwoFactorCodeDto,
    @ClientIp() ip: string,
  ): Promise<void> {
    await this.twoFactor.activate(user.id, dto.code, ip);
  }

  @Post('disable')
  @HttpCode(204)
  @InteractiveOnly()
  @ApiOperation({
    summary: 'Disable two-factor with a current 6-digit code',
    description: 'A recovery code is not accepted. Deletes the secret and the recovery codes.',
  })
  @ApiNoContentResponse()
  @ApiBadRequestResponse({ type: ErrorBody, description: 'Not a current, unused 6-digit code' })
  @ApiConflictResponse({ type: ErrorBody, description: 'Two-factor is not active' })
  @ApiForbiddenResponse({
    type: ErrorBody,
    description: 'API tokens cannot manage two-factor authentication',
  })
  @ApiTooManyRequestsResponse({ type: ErrorBody, description: '5 codes per minute; Retry-After: 60' })
  async disable(
    @CurrentUser() user: AuthUser,
    @Body() dto: TwoFactorCodeDto,
    @ClientIp() ip: string,
  ): Promise<void> {
    await this.twoFactor.disable(user.id, dto.code, ip);
  }
}
