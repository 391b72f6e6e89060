import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { AppError } from '../common/app-error.js';
import { AppConfig } from '../config/app-config.js';

/**
 * Refuses cross-site requests to the cookie-authenticated endpoints (refresh, logout). SameSite=Strict already
 * keeps the cookie off them; this also covers browsers that ignore SameSite. Clients that send neither header
 * (curl, SDKs) are not browsers and pass.
 */
@Injectable()
export class SameSiteGuard implements CanActivate {
  private readonly allowedOrigins: Set<string>;

  constructor(config: AppConfig) {
    this.allowedOrigins = new Set([new URL(config.http.baseUrl).origin, ...config.http.corsOrigins]);
  }

  canActivate(context: ExecutionContext): boolean {
    const req = context.switchToHttp().getRequest<Request>();
    const site = req.get('sec-fetch-site');
    if (site && site !== 'same-origin' && site !== 'same-site' && site !== 'none') {
      throw AppError.forbidden('Cross-site requests to this endpoint are refused');
    }
    const origin = req.get('origin');
    if (origin && origin !== 'null' && !this.allowedOrigins.has(origin) && !isSameHost(origin, req)) {
      throw AppError.forbidden('Cross-site requests to this endpoint are refused');
    }
    if (origin === 'null') {
      throw AppError.forbidden('Cross-site requests to this endpoint are refused');
    }
    return true;
  }
}

function isSameHost(origin: string, req: Request): boolean {
  try {
    return new URL(origin).host === req.get('host');
  } catch {
    return false;
  }
}
