import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import { errorBody } from '../common/error-body.js';

/** Paths the web UI never shadows: the API, the live updates, the API reference, the metrics. */
export const SERVICE_PATHS = /^\/(api|ws|v3|metrics)(\/|$)|^\/swagger-ui\.html/;

/**
 * The built web UI (web/dist): from the compiled service (dist/src/web) or from the sources (src/web, under
 * Jest), or the working directory's web/dist.
 */
export function webDist(): string | undefined {
  const candidates = [
    fileURLToPath(new URL('../../../web/dist', import.meta.url)),
    fileURLToPath(new URL('../../web/dist', import.meta.url)),
    join(process.cwd(), 'web', 'dist'),
  ];
  return candidates.find((dir) => existsSync(join(dir, 'index.html')));
}

/**
 * Serves the single-page app at /: its files (hashed assets under /assets/ cached for a year, immutable), and
 * index.html for every other GET that is not the service's own (client-side routes), never cached. Without a
 * build, those paths answer 404 saying how to build it.
 */
export function webApp(dir = webDist()): RequestHandler {
  if (!dir) {
    return (req, res, next) => {
      if ((req.method === 'GET' || req.method === 'HEAD') && !SERVICE_PATHS.test(req.path)) {
        res.status(404).json(errorBody(404, 'The web UI is not built here: run `npm run build` (npm start does)'));
        return;
      }
      next();
    };
  }
  const files = express.static(dir, {
    index: false,
    fallthrough: true,
    redirect: false,
    setHeaders: (res, path) => {
      res.setHeader('Cache-Control', /[\\/]assets[\\/]/.test(path) ? 'public, max-age=31536000, immutable' : 'no-cache');
    },
  });
  const index = join(dir, 'index.html');
  return (req: Request, res: Response, next: NextFunction) => {
    if ((req.method !== 'GET' && req.method !== 'HEAD') || SERVICE_PATHS.test(req.path)) {
      next();
      return;
    }
    files(req, res, () => {
      // A missing asset is a 404, not the app: a stale page asking for an old hash must not get HTML.
      if (req.path.startsWith('/assets/')) {
        res.status(404).json(errorBody(404, `No such file: ${req.path}`));
        return;
      }
      res.setHeader('Cache-Control', 'no-store');
      res.sendFile(index);
    });
  };
}
