// Starting what the benchmark measures: the real service from dist/ (against a fresh PostgreSQL database and a
// private Redis key prefix) and the bare NestJS baseline app. Everything started here is stopped and removed
// again by the clean-up registry in processes.mjs.
import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import pg from 'pg';
import Redis from 'ioredis';
import { isRunning, onCleanup, spawnTracked, stopChild } from './processes.mjs';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const ORPHAN_GUARD = pathToFileURL(fileURLToPath(new URL('./orphan-guard.mjs', import.meta.url))).href;

/** A TCP port that was free on 127.0.0.1 a moment ago. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** The parent's environment without any of the service's own settings, so nothing leaks into a run. */
function cleanEnv(extra) {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([key]) => key !== 'PORT' && !key.startsWith('SVC_')),
  );
  return { ...env, NODE_ENV: 'production', NO_COLOR: '1', ...extra };
}

/** Drops and recreates `name` on the server of `adminUrl` (a URL to any database there, e.g. postgres). */
export async function recreateDatabase(adminUrl, name) {
  const quoted = `"${name.replaceAll('"', '""')}"`;
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(`DROP DATABASE IF EXISTS ${quoted} WITH (FORCE)`);
    await client.query(`CREATE DATABASE ${quoted}`);
  } finally {
    await client.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${encodeURIComponent(name)}`;
  return url.toString();
}

export async function dropDatabase(adminUrl, name) {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(`DROP DATABASE IF EXISTS "${name.replaceAll('"', '""')}" WITH (FORCE)`);
  } finally {
    await client.end();
  }
}

/** Runs `fn(redis)` on a short-lived connection that fails fast instead of reconnecting forever. */
async function withRedis(redisUrl, fn) {
  const redis = new Redis(redisUrl, {
    lazyConnect: true,
    connectTimeout: 5_000,
    maxRetriesPerRequest: 1,
    retryStrategy: () => null,
  });
  redis.on('error', () => {}); // reported through the rejected command instead
  try {
    await redis.connect();
  } catch (error) {
    redis.disconnect();
    throw new Error(`Redis at ${redisUrl} does not answer: ${error.message}`);
  }
  try {
    return await fn(redis);
  } finally {
    redis.disconnect();
  }
}

/** Calls `each(keys)` for every batch of keys matching the glob `pattern`. */
async function scanKeys(redis, pattern, each) {
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    cursor = next;
    if (keys.length) {
      await each(keys);
    }
  } while (cursor !== '0');
}

/** Deletes every Redis key under `prefix`; returns how many. */
export function deleteRedisKeys(redisUrl, prefix) {
  return withRedis(redisUrl, async (redis) => {
    let deleted = 0;
    await scanKeys(redis, `${prefix.replace(/[*?[\]\\]/g, '\\$&')}*`, async (keys) => {
      deleted += await redis.del(...keys);
    });
    return deleted;
  });
}

/** Deletes keys left under bench:<pid>: by earlier runs whose process is gone (killed before cleaning up). */
export function deleteStaleBenchKeys(redisUrl) {
  return withRedis(redisUrl, async (redis) => {
    const stale = new Set();
    await scanKeys(redis, 'bench:*', (keys) => {
      for (const key of keys) {
        const pid = Number(key.split(':')[1]);
        if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && !alive(pid)) {
          stale.add(`bench:${pid}:`);
        }
      }
    });
    for (const prefix of stale) {
      await scanKeys(redis, `${prefix}*`, (keys) => redis.del(...keys));
    }
    return [...stale];
  });
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === 'EPERM';
  }
}

/** Polls `url` until `accept(response, text)` holds; fails early when `child` exits. */
export async function waitForHttp(
  url,
  { child, timeoutMs = 60_000, accept = (res) => res.status === 200, describe },
) {
  const deadline = Date.now() + timeoutMs;
  let last = 'no answer yet';
  while (Date.now() < deadline) {
    if (child && !isRunning(child)) {
      throw new Error(
        `${describe ?? 'process'} exited (code ${child.exitCode ?? child.signalCode}) before ${url} answered`,
      );
    }
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(2_000) });
      const text = await res.text();
      if (accept(res, text)) {
        return;
      }
      last = `${res.status} ${text.slice(0, 200)}`;
    } catch (error) {
      last = error.cause?.code ?? error.message;
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`${url} did not become ready within ${timeoutMs / 1000} s (last: ${last})`);
}

function tail(file, lines = 40) {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

/** Spawns `node --import orphan-guard <script>` with output to `logFile`; stopped on clean-up. */
function spawnNode(script, { env, logFile, name, nodeArgs = [] }) {
  const log = openSync(logFile, 'w');
  // BENCH_SERVICE_NODE_ARGS: extra node flags for what the bench starts, e.g. --cpu-prof --cpu-prof-dir=DIR
  // (node refuses --cpu-prof in NODE_OPTIONS).
  const extra = (process.env.BENCH_SERVICE_NODE_ARGS ?? '').split(/\s+/).filter(Boolean);
  const child = spawnTracked(process.execPath, [...extra, ...nodeArgs, '--import', ORPHAN_GUARD, script], {
    cwd: ROOT,
    env,
    stdio: ['ignore', log, log],
  });
  closeSync(log);
  onCleanup(() => stopChild(child));
  child.once('exit', (code, signal) => {
    if (!child.expectedExit) {
      console.error(
        `bench: ${name} (pid ${child.pid}) exited unexpectedly (${code ?? signal}); log: ${logFile}`,
      );
    }
  });
  return child;
}

/**
 * The V8 flags the service is shipped with (package.json's start scripts, the Dockerfile's CMD): the benches run
 * it as it is run. `--max-semi-space-size=16` keeps the young generation at Node 20's size; Node 22 and later size
 * it from the machine's memory (to 2 × 64 MB here), which a streaming import, whose batches live just long
 * enough to be promoted, fills to the top.
 */
export const SERVICE_NODE_FLAGS = ['--max-semi-space-size=16'];

/**
 * Starts the real service (node dist/main.js) on a fresh database (`dbName`, or `<dbName>_<name>` for a second,
 * differently named instance) with its own Redis key prefix. Returns
 * { name, url, pid, child, admin: {email, password}, db: {name, url}, kvPrefix, login(), logFile }.
 */
export async function startService({
  name = 'service',
  pgAdminUrl,
  dbName,
  redisUrl,
  keepDb = false,
  env = {},
  nodeArgs = SERVICE_NODE_FLAGS,
  logDir,
}) {
  const entry = join(ROOT, 'dist', 'main.js');
  if (!existsSync(entry)) {
    throw new Error('dist/main.js is missing: run `npm run build` (npm run bench does)');
  }
  const database = name === 'service' ? dbName : `${dbName}_${name.replace(/\W/g, '_')}`;
  const dbUrl = await recreateDatabase(pgAdminUrl, database);
  if (!keepDb) {
    onCleanup(() => dropDatabase(pgAdminUrl, database));
  }
  await deleteStaleBenchKeys(redisUrl);
  const kvPrefix = name === 'service' ? `bench:${process.pid}:` : `bench:${process.pid}:${name}:`;
  onCleanup(() => deleteRedisKeys(redisUrl, kvPrefix));
  const dataDir = mkdtempSync(join(tmpdir(), `tms-bench-${name}-`));
  onCleanup(() => rmSync(dataDir, { recursive: true, force: true }));

  const port = await freePort();
  const admin = { email: 'bench-admin@example.com', password: randomBytes(18).toString('base64url') };
  const logFile = join(logDir, `${name}.log`);
  const child = spawnNode(entry, {
    name,
    logFile,
    nodeArgs,
    env: cleanEnv({
      PORT: String(port),
      SVC_DATA_DIR: dataDir,
      SVC_DB_URL: dbUrl,
      SVC_KVSTORE_URL: redisUrl,
      SVC_KVSTORE_PREFIX: kvPrefix,
      SVC_JWT_SECRET: randomBytes(48).toString('base64url'),
      SVC_LOG_LEVEL: 'warn',
      SVC_BOOTSTRAP_ADMIN_EMAIL: admin.email,
      SVC_BOOTSTRAP_ADMIN_PASSWORD: admin.password,
      SVC_LOGIN_RATE_PER_MINUTE: '1000000',
      SVC_LOGIN_FAILURES_PER_ACCOUNT_HOUR: '1000000',
      ...env,
    }),
  });
  const url = `http://127.0.0.1:${port}`;
  const started = performance.now();
  try {
    await waitForHttp(`${url}/api/health/ready`, { child, describe: name });
  } catch (error) {
    throw new Error(`${error.message}\n--- ${logFile} (tail) ---\n${tail(logFile)}`);
  }
  const bootMs = performance.now() - started;

  async function login(username = admin.email, password = admin.password) {
    const res = await fetch(`${url}/api/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username, password }),
    });
    const body = await res.json().catch(() => ({}));
    if (res.status !== 200 || typeof body.accessToken !== 'string') {
      throw new Error(`POST /api/auth/login answered ${res.status}: ${JSON.stringify(body)}`);
    }
    return body.accessToken;
  }

  return {
    name,
    url,
    pid: child.pid,
    child,
    admin,
    db: { name: database, url: dbUrl },
    kvPrefix,
    logFile,
    bootMs,
    login,
    stop: () => stopChild(child),
  };
}

/** Starts bench/bare-app.mjs (a bare NestJS app answering GET /bare with {}); resolves once it answers 200 {}. */
export async function startBareApp({ name = 'bare-app', logDir }) {
  const port = await freePort();
  const logFile = join(logDir, `${name}.log`);
  const child = spawnNode(join(ROOT, 'bench', 'bare-app.mjs'), {
    name,
    logFile,
    env: cleanEnv({ PORT: String(port) }),
  });
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitForHttp(`${url}/bare`, {
      child,
      describe: name,
      timeoutMs: 30_000,
      accept: (res, text) => res.status === 200 && text.trim() === '{}',
    });
  } catch (error) {
    throw new Error(`${error.message}\n--- ${logFile} (tail) ---\n${tail(logFile)}`);
  }
  return {
    name,
    url,
    routeUrl: `${url}/bare`,
    pid: child.pid,
    child,
    logFile,
    stop: () => stopChild(child),
  };
}
