// Live updates: two replicas relayed through RabbitMQ's STOMP plugin. The latency from the V1 request that creates
// a run on replica A to the run.created event's arrival on each of --live-sockets subscribed sockets on replica B;
// then how much memory one replica spends on idle authenticated sockets (--live-idle of them).
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fmt } from '../lib/report.mjs';

export const name = 'live';
export const title = 'Live updates: run.created from replica A to sockets on replica B, and idle sockets per GiB';

const require = createRequire(import.meta.url);
const WebSocket = require('ws');

const P99_TARGET_MS = 50;
const IDLE_TARGET = 50_000;
const GIB_MB = 1024;

function rssMb(pid) {
  const kb = Number(/^VmRSS:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
  return kb / 1024;
}

/**
 * Lets a process hold `n` open files where that is allowed (prlimit; raising the hard limit needs
 * CAP_SYS_RESOURCE, which this machine's root lacks: its hard limit is 20,000). Returns the limit in force.
 */
function allowFiles(pid, n) {
  try {
    execFileSync('prlimit', ['--pid', String(pid), `--nofile=${n}:${n}`], { stdio: 'ignore' });
  } catch {
    // Keep what the process has.
  }
  const limits = readFileSync(`/proc/${pid}/limits`, 'utf8');
  return Number(/^Max open files\s+(\d+)/m.exec(limits)?.[1] ?? 1024);
}

const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

/**
 * Opens `count` sockets to `url`, authenticated with `token` and subscribed to `projectId` when given, from
 * several loopback source addresses (one address has ~28,000 ephemeral ports), `parallel` at a time.
 */
async function openSockets(url, token, count, { projectId, parallel = 200, onMessage } = {}) {
  const sockets = [];
  let next = 0;
  async function worker() {
    while (next < count) {
      const i = next++;
      const ws = new WebSocket(`${url.replace(/^http/, 'ws')}/ws`, { localAddress: `127.0.0.${2 + (i % 4)}`, perMessageDeflate: false });
      await new Promise((resolve, reject) => {
        ws.once('open', resolve);
        ws.once('error', reject);
      });
      ws.on('error', () => undefined);
      ws.send(JSON.stringify({ type: 'auth', token }));
      if (projectId !== undefined) {
        ws.send(JSON.stringify({ type: 'subscribe', projectId }));
        await new Promise((resolve) => ws.once('message', resolve));
      }
      if (onMessage) {
        ws.on('message', (data) => onMessage(data, i));
      }
      sockets.push(ws);
    }
  }
  await Promise.all(Array.from({ length: parallel }, worker));
  return sockets;
}

export async function run(ctx) {
  const shared = {
    SVC_JWT_SECRET: randomBytes(48).toString('base64url'),
    SVC_BROKER_STOMP_HOST: '127.0.0.1',
    SVC_BROKER_STOMP_PORT: process.env.BENCH_STOMP_PORT ?? '61613',
    SVC_BROKER_STOMP_LOGIN: 'guest',
    SVC_BROKER_STOMP_PASSCODE: 'guest',
    SVC_BROKER_STOMP_TOPIC: `bench-${process.pid}.live`,
    // One user's thousands of sockets from four addresses: what is measured is delivery and memory, not the caps.
    SVC_WS_MAX_PER_USER: '1000000',
    SVC_WS_MAX_PER_ADDRESS: '1000000',
    SVC_WS_MAX_UNAUTHENTICATED_PER_ADDRESS: '1000000',
  };
  const ownFiles = allowFiles(process.pid, 2 * ctx.options.liveIdle + 10_000);
  const a = await ctx.startServiceVariant('live-a', shared);
  const b = await ctx.startServiceVariant('live-b', {
    ...shared,
    SVC_DB_URL: a.db.url,
    SVC_KVSTORE_PREFIX: a.kvPrefix,
    SVC_BOOTSTRAP_ADMIN_PASSWORD: a.admin.password,
  });
  allowFiles(b.pid, 2 * ctx.options.liveIdle + 10_000);
  const token = await a.login();
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const project = await fetch(`${a.url}/api/projects`, { method: 'POST', headers, body: JSON.stringify({ key: 'LIVE', name: 'live' }) }).then((r) => r.json());

  // Latency: each event's arrival on each of B's sockets, from the moment A's request was sent.
  const sent = new Map();
  const latencies = [];
  const marker = /"name":"live-(\d+)"/;
  const sockets = await openSockets(b.url, token, ctx.options.liveSockets, {
    projectId: project.id,
    onMessage: (data) => {
      const at = performance.now();
      const n = marker.exec(data.toString('latin1'))?.[1];
      if (n !== undefined && sent.has(n)) {
        latencies.push(at - sent.get(n));
      }
    },
  });
  ctx.log(`${sockets.length} sockets subscribed on B; creating ${ctx.options.liveEvents} runs on A…`);
  for (let i = 0; i < 20; i++) {
    // Warm-up: the first requests compile the paths on both replicas.
    await fetch(`${a.url}/api/projects/${project.id}/runs`, { method: 'POST', headers, body: JSON.stringify({ name: `warm-${i}` }) });
  }
  await new Promise((resolve) => setTimeout(resolve, 500));
  for (let i = 0; i < ctx.options.liveEvents; i++) {
    sent.set(String(i), performance.now());
    const res = await fetch(`${a.url}/api/projects/${project.id}/runs`, { method: 'POST', headers, body: JSON.stringify({ name: `live-${i}` }) });
    if (res.status !== 201) {
      throw new Error(`POST runs answered ${res.status}`);
    }
    await res.arrayBuffer();
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const expected = ctx.options.liveEvents * sockets.length;
  for (let waited = 0; latencies.length < expected && waited < 10_000; waited += 50) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  if (latencies.length !== expected) {
    throw new Error(`expected ${expected} deliveries on B, got ${latencies.length}`);
  }
  sockets.forEach((ws) => ws.terminate());
  latencies.sort((x, y) => x - y);
  const p50 = percentile(latencies, 50);
  const p99 = percentile(latencies, 99);

  // Idle sockets: a replica of its own, so its memory is the sockets'.
  let idle;
  if (ctx.options.liveIdle > 0) {
    const c = await ctx.startServiceVariant('live-idle', shared);
    const files = Math.min(ownFiles, allowFiles(c.pid, 2 * ctx.options.liveIdle + 10_000));
    // Each socket is a file on both sides; leave room for the rest (database pool, logs, libraries).
    const count = Math.min(ctx.options.liveIdle, files - 500);
    if (count < ctx.options.liveIdle) {
      ctx.log(`open files are limited to ${files} here: measuring ${count} sockets and scaling their cost to 1 GiB`);
    }
    const idleToken = await c.login();
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const before = rssMb(c.pid);
    ctx.log(`opening ${count} idle authenticated sockets on one replica…`);
    const started = performance.now();
    const many = await openSockets(c.url, idleToken, count);
    const openSeconds = (performance.now() - started) / 1000;
    await new Promise((resolve) => setTimeout(resolve, 3000));
    const after = rssMb(c.pid);
    const perSocketKb = ((after - before) * 1024) / many.length;
    idle = {
      sockets: many.length,
      beforeMb: before,
      afterMb: after,
      perSocketKb,
      openSeconds,
      perGiB: Math.floor(((GIB_MB - before) * 1024) / perSocketKb),
    };
    many.forEach((ws) => ws.terminate());
    await c.stop();
  }

  const summary = [
    {
      metric: `live: run.created from A's request to ${sockets.length} sockets on B, p99`,
      value: p99,
      unit: 'ms',
      digits: 1,
      target: `< ${P99_TARGET_MS}`,
      ok: p99 < P99_TARGET_MS,
    },
    { metric: `live: the same, p50`, value: p50, unit: 'ms', digits: 1 },
  ];
  if (idle) {
    summary.push(
      {
        metric: `live: service RSS holding ${idle.sockets} idle authenticated sockets`,
        value: idle.afterMb,
        unit: 'MB',
        digits: 0,
      },
      {
        metric: 'live: idle authenticated sockets one replica holds within 1 GiB (from the per-socket cost)',
        value: idle.perGiB,
        unit: 'sockets',
        digits: 0,
        target: `≥ ${IDLE_TARGET}`,
        ok: idle.perGiB >= IDLE_TARGET,
      },
    );
  }
  const rows = [
    ['deliveries timed', String(latencies.length)],
    ['p50 ms', fmt(p50, 1)],
    ['p90 ms', fmt(percentile(latencies, 90), 1)],
    ['p99 ms', fmt(p99, 1)],
    ['max ms', fmt(latencies[latencies.length - 1], 1)],
  ];
  if (idle) {
    rows.push(
      ['idle sockets opened', String(idle.sockets)],
      ['seconds to open and authenticate them', fmt(idle.openSeconds, 1)],
      ['service RSS before / after, MB', `${fmt(idle.beforeMb, 0)} / ${fmt(idle.afterMb, 0)}`],
      ['KB per idle socket', fmt(idle.perSocketKb, 1)],
    );
  }
  return {
    summary,
    tables: [{ title: `Live updates, ${sockets.length} sockets on B, ${ctx.options.liveEvents} runs created on A`, headers: ['', ''], rows }],
    data: { p50, p99, deliveries: latencies.length, idle },
  };
}
