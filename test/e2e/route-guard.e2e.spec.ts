import { RequestMethod } from '@nestjs/common';
import { DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import { PATH_METADATA, METHOD_METADATA } from '@nestjs/common/constants.js';
import request from 'supertest';
import { IS_PUBLIC } from '../../src/common/decorators.js';
import { RunningApp, TestDeployment } from '../support/app.js';

interface Route {
  method: string;
  path: string;
  isPublic: boolean;
}

/** Every route of the application, read from Nest's own metadata, so a new controller cannot be missed. */
function routesOf(svc: RunningApp): Route[] {
  const discovery = svc.app.get(DiscoveryService);
  const scanner = svc.app.get(MetadataScanner);
  const reflector = svc.app.get(Reflector);
  const routes: Route[] = [];
  for (const wrapper of discovery.getControllers()) {
    const controller = wrapper.metatype as (new (...args: never[]) => object) | undefined;
    if (!controller || !wrapper.instance) {
      continue;
    }
    const base = [].concat(Reflect.getMetadata(PATH_METADATA, controller) ?? '')[0] as string;
    const proto = Object.getPrototypeOf(wrapper.instance) as object;
    for (const name of scanner.getAllMethodNames(proto)) {
      const handler = (proto as Record<string, object>)[name];
      const path = Reflect.getMetadata(PATH_METADATA, handler) as string | string[] | undefined;
      if (path === undefined) {
        continue;
      }
      const method = RequestMethod[Reflect.getMetadata(METHOD_METADATA, handler) as number];
      const full = `/${[base, [].concat(path as never)[0]].filter(Boolean).join('/')}`.replace(/\/+/g, '/');
      const isPublic = Boolean(reflector.getAllAndOverride<boolean>(IS_PUBLIC, [handler as never, controller]));
      routes.push({ method, path: full.replace(/:(\w+)/g, '1'), isPublic });
    }
  }
  return routes;
}

describe('Deny by default', () => {
  const deployment = new TestDeployment();
  let svc: RunningApp;

  beforeAll(async () => {
    [svc] = await deployment.start();
  });
  afterAll(() => deployment.stop());

  it('finds the application routes', () => {
    const routes = routesOf(svc);
    expect(routes.length).toBeGreaterThan(5);
    expect(routes).toEqual(expect.arrayContaining([{ method: 'GET', path: '/api/auth/me', isPublic: false }]));
  });

  // The only routes that may be reached without credentials. Adding one here is a deliberate decision.
  const PUBLIC = new Set([
    'POST /api/auth/login',
    'POST /api/auth/refresh',
    'POST /api/auth/logout',
    'POST /api/invitations/accept',
    'POST /api/auth/register',
    'POST /api/auth/verify-email',
    'POST /api/auth/forgot-password',
    'POST /api/auth/reset-password',
    'POST /api/auth/2fa/verify',
    'POST /api/billing/events',
    'GET /api/health',
    'GET /api/health/ready',
    'GET /metrics',
    // Not the WebSocket itself (an upgrade, authenticated by its first message): the 426 for a plain GET.
    'GET /ws/',
  ]);

  it('marks public exactly the routes meant to be public', () => {
    const publicRoutes = routesOf(svc)
      .filter((r) => r.isPublic)
      .map((r) => `${r.method} ${r.path}`);
    expect(new Set(publicRoutes)).toEqual(PUBLIC);
  });

  it('answers 401 on every other route without credentials', async () => {
    const guarded = routesOf(svc).filter((r) => !r.isPublic);
    for (const route of guarded) {
      const res = await request(svc.url)[route.method.toLowerCase() as 'get'](route.path).send({});
      expect({ route: `${route.method} ${route.path}`, status: res.status }).toEqual({
        route: `${route.method} ${route.path}`,
        status: 401,
      });
      expect(res.body).toEqual({ status: 401, error: 'Unauthorized', message: expect.any(String) });
    }
  });
});
