// Requests per second of GET /api/auth/me authenticated with an API token, against the same request with an
// access JWT: the price of API-token authentication (token lookup) relative to JWT verification.
import { runsTable } from '../lib/report.mjs';

export const name = 'apitoken-me-vs-jwt';
export const title = 'Throughput: GET /api/auth/me with an API token vs with an access JWT';
export const TARGET_RATIO = 0.7;

export async function run(ctx) {
  const service = await ctx.service();
  const jwt = await service.login();
  const meUrl = `${service.url}/api/auth/me`;
  const jwtHeaders = { authorization: `Bearer ${jwt}` };

  const created = await fetch(`${service.url}/api/users/me/api-keys`, {
    method: 'POST',
    headers: { ...jwtHeaders, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'bench' }),
  });
  const createdBody = await created.json().catch(() => ({}));
  if (created.status !== 201 || typeof createdBody.token !== 'string') {
    throw new Error(`POST /api/users/me/api-keys answered ${created.status}: ${JSON.stringify(createdBody)}`);
  }
  const apiHeaders = { authorization: `Bearer ${createdBody.token}` };

  for (const [kind, headers] of [['JWT', jwtHeaders], ['API token', apiHeaders]]) {
    const probe = await fetch(meUrl, { headers });
    const me = await probe.json().catch(() => ({}));
    if (probe.status !== 200 || me.email !== service.admin.email) {
      throw new Error(`GET /api/auth/me (${kind}) answered ${probe.status}: ${JSON.stringify(me)}`);
    }
  }

  const { runs, medians } = await ctx.compareThroughput([
    { key: 'jwt', label: 'GET /api/auth/me (JWT)', target: service, url: meUrl, headers: jwtHeaders },
    { key: 'apiToken', label: 'GET /api/auth/me (API token)', target: service, url: meUrl, headers: apiHeaders },
  ]);
  const ratio = medians.apiToken.rps / medians.jwt.rps;

  return {
    tables: [{ title: 'runs (cpu in cores; machine = whole box incl. other tenants)', ...runsTable(runs) }],
    summary: [
      { metric: 'GET /api/auth/me (JWT), median', value: medians.jwt.rps, unit: 'req/s' },
      { metric: 'GET /api/auth/me (API token), median', value: medians.apiToken.rps, unit: 'req/s' },
      {
        metric: 'ratio apiToken / JWT',
        value: ratio,
        unit: '',
        digits: 3,
        target: `≥ ${TARGET_RATIO}`,
        ok: ratio >= TARGET_RATIO,
      },
    ],
    data: {
      connections: ctx.options.connections,
      durationSec: ctx.options.durationSec,
      rounds: ctx.options.rounds,
      medians,
      ratio,
      targetRatio: TARGET_RATIO,
      runs,
    },
  };
}
