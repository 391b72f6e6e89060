// Requests per second of GET /api/auth/me with an access JWT, against a bare NestJS route on the same adapter:
// the price of the service's whole request path (middleware, global guard, JWT verification, the user lookup).
// A third target, the service's public GET /api/health (no credential, no database), splits that price into the
// part every request pays (the app's middleware stack and global guard) and the part of JWT auth + user lookup.
import { runsTable } from '../lib/report.mjs';

export const name = 'jwt-me-vs-bare';
export const title = 'Throughput: GET /api/auth/me (access JWT) vs a bare NestJS route';
export const TARGET_RATIO = 0.8;

export async function run(ctx) {
  const [service, bare] = await Promise.all([ctx.service(), ctx.bareApp()]);
  const token = await service.login();
  const meUrl = `${service.url}/api/auth/me`;
  const headers = { authorization: `Bearer ${token}` };

  const probe = await fetch(meUrl, { headers });
  const me = await probe.json();
  if (probe.status !== 200 || me.email !== service.admin.email) {
    throw new Error(`GET /api/auth/me answered ${probe.status}: ${JSON.stringify(me)}`);
  }

  const { runs, medians } = await ctx.compareThroughput([
    { key: 'bare', label: 'bare Nest GET /bare', target: bare, url: bare.routeUrl },
    { key: 'me', label: 'GET /api/auth/me (JWT)', target: service, url: meUrl, headers },
    { key: 'health', label: 'service GET /api/health', target: service, url: `${service.url}/api/health` },
  ]);
  const ratio = medians.me.rps / medians.bare.rps;
  const healthRatio = medians.health.rps / medians.bare.rps;

  return {
    tables: [{ title: 'runs (cpu in cores; machine = whole box incl. other tenants)', ...runsTable(runs) }],
    summary: [
      { metric: 'bare Nest route, median', value: medians.bare.rps, unit: 'req/s' },
      { metric: 'GET /api/auth/me (JWT), median', value: medians.me.rps, unit: 'req/s' },
      {
        metric: 'ratio me / bare',
        value: ratio,
        unit: '',
        digits: 3,
        target: `≥ ${TARGET_RATIO}`,
        ok: ratio >= TARGET_RATIO,
      },
      { metric: 'service GET /api/health, median (info)', value: medians.health.rps, unit: 'req/s' },
      { metric: 'ratio health / bare (info: middleware only)', value: healthRatio, unit: '', digits: 3 },
    ],
    data: {
      connections: ctx.options.connections,
      durationSec: ctx.options.durationSec,
      rounds: ctx.options.rounds,
      medians,
      ratio,
      healthRatio,
      targetRatio: TARGET_RATIO,
      runs,
    },
  };
}
