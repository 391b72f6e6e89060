import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { JwtService } from '@nestjs/jwt';
import { AppConfig } from '../config/app-config.js';

export interface AccessClaims {
  sub: string;
  jti: string;
  iat: number;
  exp: number;
  /** Distinguishes access tokens from other tokens signed with the same key (e.g. two-factor challenges). */
  typ: 'access';
}

export interface IssuedAccessToken {
  accessToken: string;
  tokenType: 'Bearer';
  expiresIn: number;
}

@Injectable()
export class AccessTokenService {
  constructor(
    private readonly jwt: JwtService,
    private readonly config: AppConfig,
  ) {}

  async issue(userId: string): Promise<IssuedAccessToken> {
    const expiresIn = this.config.auth.accessTtlSeconds;
    const accessToken = await this.jwt.signAsync(
      { sub: userId, typ: 'access' },
      { jwtid: randomUUID(), expiresIn },
    );
    return { accessToken, tokenType: 'Bearer', expiresIn };
  }
}
