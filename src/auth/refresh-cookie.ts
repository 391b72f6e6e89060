import type { CookieOptions, Request, Response } from 'express';
import type { AppConfig } from '../config/app-config.js';

export const REFRESH_COOKIE = 'svc_refresh';

function options(config: AppConfig): CookieOptions {
  return { httpOnly: true, sameSite: 'strict', path: '/api/auth', secure: config.auth.cookieSecure };
}

export function setRefreshCookie(res: Response, token: string, config: AppConfig): void {
  res.cookie(REFRESH_COOKIE, token, { ...options(config), maxAge: config.auth.refreshTtlSeconds * 1000 });
}

export function clearRefreshCookie(res: Response, config: AppConfig): void {
  res.cookie(REFRESH_COOKIE, '', { ...options(config), maxAge: 0 });
}

export function refreshCookieOf(req: Request): string | undefined {
  const value = (req.cookies as Record<string, unknown> | undefined)?.[REFRESH_COOKIE];
  return typeof value === 'string' && value ? value : undefined;
}
