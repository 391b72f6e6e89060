// Latency of POST /api/auth/login with correct credentials, one request at a time. Alongside it, the cost of
// the argon2 verification alone (the stored hash, verified in this process), to show how much of a login is
// the password hash and how much is everything else.
import argon2 from 'argon2';
import pg from 'pg';
import { startCpuMeter } from '../lib/cpu.mjs';
import { summarize } from '../lib/stats.mjs';
import { fmt } from '../lib/report.mjs';

export const name = 'login-latency';
export const title = 'Latency: POST /api/auth/login, sequential, correct credentials';

const WARMUP = 5;
const ARGON2_SAMPLES = 20;

export async function run(ctx) {
  const service = await ctx.service();
  const n = ctx.options.logins;
  const body = JSON.stringify({ username: service.admin.email, password: service.admin.password });
  const once = async () => {
    const started = performance.now();
    const res = await fetch(`${service.url}/api/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    });
    const text = await res.text();
    const elapsed = performance.now() - started;
    if (res.status !== 200 || !text.includes('accessToken')) {
      throw new Error(`POST /api/auth/login answered ${res.status}: ${text.slice(0, 300)}`);
    }
    return elapsed;
  };

  for (let i = 0; i < WARMUP; i++) {
    await once();
  }
  ctx.log(`${n} sequential logins…`);
  const meter = startCpuMeter({ pids: { server: service.pid } });
  const samples = [];
  for (let i = 0; i < n; i++) {
    samples.push(await once());
  }
  const { cores, wallSeconds } = meter.stop();
  const login = summarize(samples);

  const argon2Ms = await argon2Alone(service.db.url, service.admin);

  const row = (label, s) => [
    label,
    s.count,
    fmt(s.mean, 1),
    fmt(s.p50, 1),
    fmt(s.p90, 1),
    fmt(s.p99, 1),
    fmt(s.max, 1),
  ];
  return {
    tables: [
      {
        title: `latency in ms; server cpu during the logins: ${fmt(cores.server, 2)} cores, ${fmt(n / wallSeconds, 1)} logins/s`,
        headers: ['what', 'n', 'mean', 'p50', 'p90', 'p99', 'max'],
        rows: [row('POST /api/auth/login', login), row('argon2.verify alone (same hash)', argon2Ms)],
      },
    ],
    summary: [
      { metric: 'login p50', value: login.p50, unit: 'ms', digits: 1 },
      { metric: 'login p99', value: login.p99, unit: 'ms', digits: 1 },
      { metric: 'of which argon2 verify (p50)', value: argon2Ms.p50, unit: 'ms', digits: 1 },
    ],
    data: {
      logins: n,
      latencyMs: login,
      argon2VerifyMs: argon2Ms,
      serverCpuCores: cores.server,
      loginsPerSecond: n / wallSeconds,
    },
  };
}

/** Verifies the admin's stored password hash in this process: the argon2 share of a login. */
async function argon2Alone(dbUrl, admin) {
  const client = new pg.Client({ connectionString: dbUrl });
  await client.connect();
  let hash;
  try {
    ({
      rows: [{ password_hash: hash }],
    } = await client.query('SELECT password_hash FROM users WHERE email = $1', [admin.email]));
  } finally {
    await client.end();
  }
  await argon2.verify(hash, admin.password);
  const samples = [];
  for (let i = 0; i < ARGON2_SAMPLES; i++) {
    const started = performance.now();
    if (!(await argon2.verify(hash, admin.password))) {
      throw new Error('the stored hash does not verify the bootstrap password');
    }
    samples.push(performance.now() - started);
  }
  return summarize(samples);
}
