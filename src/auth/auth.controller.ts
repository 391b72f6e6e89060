import { Body, Controller, Get, Header, HttpCode, Post, Req, Res, UseGuards } from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiCookieAuth,
  ApiExtraModels,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
  ApiTooManyRequestsResponse,
  ApiUnauthorizedResponse,
  getSchemaPath,
} from '@nestjs/swagger';
import type { Request, Response } from 'express';
import type { AuthUser } from '../common/auth-user.js';
import { ClientIp, Public } from '../common/decorators.js';
import { ErrorBody } from '../common/error-body.js';
import { AppConfig } from '../config/app-config.js';
import { AuthService, SignedIn } from './auth.service.js';
import { API_TOKEN_PREFIX } from './authentication.guard.js';
import { LoginDto } from './dto/login.dto.js';
import { MeDto } from './dto/me.dto.js';
import { TokenResponseDto } from './dto/token-response.dto.js';
import { clearRefreshCookie, refreshCookieOf, setRefreshCookie } from './refresh-cookie.js';
import { SameSiteGuard } from './same-site.guard.js';
import { TwoFactorChallengeDto, TwoFactorVerifyDto } from '../two-factor/dto/two-factor.dto.js';

@ApiTags('Authentication')
@Controller('api/auth')
export class AuthController {
  constructor(
    private readonly auth: AuthService,
    private readonly config: AppConfig,
  ) {}

  @Public()
  @Post('login')
  @HttpCode(200)
  @Header('Cache-Control', 'no-store')
  @ApiOperation({ summary: 'Sign in; sets the rotating refresh cookie `svc_refresh`' })
  @ApiExtraModels(TokenResponseDto, TwoFactorChallengeDto)
  @ApiOkResponse({
    description:
      'Signed in, or, with two-factor active, a challenge for POST /api/auth/2fa/verify (no cookie, no access)',
    schema: {
      oneOf: [{ $ref: getSchemaPath(TokenResponseDto) }, { $ref: getSchemaPath(TwoFactorChallengeDto) }],
    },
  })
  @ApiUnauthorizedResponse({ type: ErrorBody, description: 'Wrong user name or password' })
  @ApiTooManyRequestsResponse({
    type: ErrorBody,
    description: '60 attempts per minute per client; Retry-After: 60',
  })
  async login(
    @Body() dto: LoginDto,
    @ClientIp() ip: string,
    @Res({ passthrough: true }) res: Response,
  ): Promise<TokenResponseDto | TwoFactorChallengeDto> {
    const outcome = await this.auth.login(dto, ip);
    return 'twoFactorRequired' in outcome ? outcome : this.respond(res, outcome);
  }

  @Public()
  @Post('2fa/verify')
  @HttpCode(200)
  @Header('Cache-Control', 'no-store')
  @ApiTags('Two-factor authentication')
  @ApiOperation({
    summary: 'Second login step: the 6-digit code or one unused recovery code; sets the refresh cookie',
    description:
      'A code accepted once is refused in its time step (no replay). 5 attempts per minute per user.',
  })
  @ApiOkResponse({ type: TokenResponseDto })
  @ApiUnauthorizedResponse({
    type: ErrorBody,
    description: 'Wrong code, or the challenge is invalid, expired or used',
  })
  @ApiTooManyRequestsResponse({
    type: ErrorBody,
    description: '5 attempts per minute per user; Retry-After: 60',
  })
  async verifyTwoFactor(
    @Body() dto: TwoFactorVerifyDto,
    @ClientIp() ip: string,
    @Res({ passthrough: true }) res: Response,
  ): Promise<TokenResponseDto> {
    return this.respond(res, await this.auth.verifyTwoFactor(dto, ip));
  }

  @Public()
  @Post('refresh')
  @HttpCode(200)
  @UseGuards(SameSiteGuard)
  @Header('Cache-Control', 'no-store')
  @ApiCookieAuth('svc_refresh')
  @ApiOperation({ summary: 'New access token from the refresh cookie, which is rotated' })
  @ApiOkResponse({ type: TokenResponseDto })
  @ApiUnauthorizedResponse({
    type: ErrorBody,
    description: 'Missing, expired, revoked or reused; cookie cleared',
  })
  async refresh(
    @Req() req: Request,
    @ClientIp() ip: string,
    @Res({ passthrough: true }) res: Response,
  ): Promise<TokenResponseDto> {
    try {
      return this.respond(res, await this.auth.refresh(refreshCookieOf(req), ip));
    } catch (error) {
      clearRefreshCookie(res, this.config);
      throw error;
    }
  }

  @Public()
  @Post('logout')
  @HttpCode(204)
  @UseGuards(SameSiteGuard)
  @ApiCookieAuth('svc_refresh')
  @ApiBearerAuth()
  @ApiOperation({
    summary:
      "End this session: revoke the refresh cookie's token family and its access tokens, and the access token sent, if any; clear the cookie",
  })
  @ApiNoContentResponse()
  async logout(@Req() req: Request, @ClientIp() ip: string, @Res({ passthrough: true }) res: Response) {
    await this.auth.logout(refreshCookieOf(req), bearerJwtOf(req), ip);
    clearRefreshCookie(res, this.config);
  }

  @Get('me')
  @ApiBearerAuth()
  @ApiOperation({ summary: 'The signed-in user' })
  @ApiOkResponse({ type: MeDto })
  // @Req() rather than @CurrentUser(): Nest runs the global pipes over a custom decorator's value (an async
  // step per request), not over the request object, and this is the hottest authenticated read.
  me(@Req() req: Request): MeDto | Promise<MeDto> {
    return this.auth.me((req.user as AuthUser).id);
  }

  private respond(res: Response, signedIn: SignedIn): TokenResponseDto {
    setRefreshCookie(res, signedIn.refreshToken, this.config);
    return signedIn.access;
  }
}

/** The access JWT of an `Authorization: Bearer` header, if the request has one (not an API token). */
function bearerJwtOf(req: Request): string | undefined {
  const [scheme, value, extra] = (req.headers.authorization ?? '').split(' ');
  return scheme.toLowerCase() === 'bearer' &&
    value &&
    extra === undefined &&
    !value.startsWith(API_TOKEN_PREFIX)
    ? value
    : undefined;
}
