import type { AddressInfo } from 'node:net';
import express from 'express';
import { Metrics } from './metrics.js';

/** Serves GET /things/:id, each request started on `metrics`; resolves to the base URL and a closer. */
async function serve(metrics: Metrics): Promise<{ url: string; close: () => Promise<void> }> {
  const app = express();
  app.use((req, _res, next) => {
    metrics.start(req);
    next();
  });
  app.get('/things/:id', (_req, res) => {
    res.status(201).json({});
  });
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** Node reports a response's end once the socket took its last byte, which can trail the client's read by a turn. */
const settled = () => new Promise((resolve) => setTimeout(resolve, 20));

const sample = (text: string, route: string) =>
  text
    .split('\n')
    .find((line) => line.startsWith('tms_http_request_duration_seconds_count') && line.includes(route));

describe(Metrics.name, () => {
  it('times each request under its route pattern, method and status, never the raw path', async () => {
    const metrics = new Metrics();
    const app = await serve(metrics);
    try {
      await fetch(`${app.url}/things/1`);
      await fetch(`${app.url}/things/2`);
      await fetch(`${app.url}/nowhere`);
      await settled();
      const text = await metrics.registry.metrics();
      expect(sample(text, 'route="/things/:id"')).toMatch(/method="GET".*status="201".* 2$/);
      expect(sample(text, 'route="unmatched"')).toMatch(/status="404".* 1$/);
      expect(text).not.toContain('/things/1');
    } finally {
      await app.close();
      metrics.onModuleDestroy();
    }
  });

  it('counts only the requests started on it (Node reports every response of the process)', async () => {
    const mine = new Metrics();
    const other = new Metrics();
    const app = await serve(mine);
    try {
      await fetch(`${app.url}/things/1`);
      await settled();
      expect(sample(await mine.registry.metrics(), '/things/:id')).toMatch(/ 1$/);
      expect(sample(await other.registry.metrics(), '/things/:id')).toBeUndefined();
    } finally {
      await app.close();
      mine.onModuleDestroy();
      other.onModuleDestroy();
    }
  });

  it('stops observing once destroyed', async () => {
    const metrics = new Metrics();
    const app = await serve(metrics);
    try {
      metrics.onModuleDestroy();
      await fetch(`${app.url}/things/1`);
      await settled();
      expect(sample(await metrics.registry.metrics(), '/things/:id')).toBeUndefined();
    } finally {
      await app.close();
    }
  });
});
