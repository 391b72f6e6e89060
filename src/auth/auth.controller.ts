import { Body, Controller, Get, Header, HttpCode, Post, Req, Res, UseGuards } from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiCookieAuth,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
  ApiTooManyRequestsResponse,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import type { Request, Response } from 'express';
import type { AuthUser } from '../common/auth-user.js';
import { ClientIp, CurrentUser, Public } from '../common/decorators.js';
import { ErrorBody } from '../common/error-body.js';
import { AppConfig } from '../config/app-config.js';
import { AuthService, SignedIn } from './auth.service.js';
import { LoginDto } from './dto/login.dto.js';
import { MeDto } from './dto/me.dto.js';
import { TokenResponseDto } from './dto/token-response.dto.js';
import { LoginThrottlerGuard } from './login-throttler.guard.js';
import { clearRefreshCookie, refreshCookieOf, setRefreshCookie } from './refresh-cookie.js';
import { SameSiteGuard } from './same-site.guard.js';

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
  @UseGuards(LoginThrottlerGuard)
  @Header('Cache-Control', 'no-store')
  @ApiOperation({ summary: 'Sign in; sets the rotating refresh cookie `svc_refresh`' })
  @ApiOkResponse({ type: TokenResponseDto })
  @ApiUnauthorizedResponse({ type: ErrorBody, description: 'Wrong user name or password' })
  @ApiTooManyRequestsResponse({ type: ErrorBody, description: '60 attempts per minute per client; Retry-After: 60' })
  async login(
    @Body() dto: LoginDto,
    @ClientIp() ip: string,
    @Res({ passthrough: true }) res: Response,
  ): Promise<TokenResponseDto> {
    return this.respond(res, await this.auth.login(dto, ip));
  }

  @Public()
  @Post('refresh')
  @HttpCode(200)
  @UseGuards(SameSiteGuard)
  @Header('Cache-Control', 'no-store')
  @ApiCookieAuth('svc_refresh')
  @ApiOperation({ summary: 'New access token from the refresh cookie, which is rotated' })
  @ApiOkResponse({ type: TokenResponseDto })
  @ApiUnauthorizedResponse({ type: ErrorBody, description: 'Missing, expired, revoked or reused; cookie cleared' })
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
  @ApiOperation({ summary: "Revoke the refresh cookie's token family and clear the cookie" })
  @ApiNoContentResponse()
  async logout(@Req() req: Request, @ClientIp() ip: string, @Res({ passthrough: true }) res: Response) {
    await this.auth.logout(refreshCookieOf(req), ip);
    clearRefreshCookie(res, this.config);
  }

  @Get('me')
  @ApiBearerAuth()
  @ApiOperation({ summary: 'The signed-in user' })
  @ApiOkResponse({ type: MeDto })
  me(@CurrentUser() user: AuthUser): Promise<MeDto> {
    return this.auth.me(user.id);
  }

  private respond(res: Response, signedIn: SignedIn): TokenResponseDto {
    setRefreshCookie(res, signedIn.refreshToken, this.config);
    return signedIn.access;
  }
}
