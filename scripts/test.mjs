#!/usr/bin/env node
// `npm test`: prepares what the suite needs on this kind of machine (the databases, RabbitMQ's STOMP plugin, slapd),
// builds, then runs every Jest project (unit, integration, e2e) against the real services, and closes with one
// plain summary line.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import net from 'node:net';
import { dirname, join } from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
process.chdir(root);

const SERVICES = [
  {
    name: 'PostgreSQL',
    port: 5432,
    start: 'pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql | tail -1) main start',
  },
  {
    name: 'Redis',
    port: 6379,
    start:
      'redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no --dir /var/lib/redis --logfile /var/log/redis/ci.log',
  },
];

function reachable(port) {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.setTimeout(1000);
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('timeout', () => (socket.destroy(), resolve(false)));
    socket.once('error', () => resolve(false));
  });
}

async function ensureServices() {
  for (const service of SERVICES) {
    if (await reachable(service.port)) {
      continue;
    }
    console.log(`${service.name} is not answering on ${service.port}; starting it`);
    spawnSync('sh', ['-c', service.start], { stdio: 'inherit' });
    for (let i = 0; i < 30 && !(await reachable(service.port)); i++) {
      await new Promise((r) => setTimeout(r, 1000));
    }
    if (!(await reachable(service.port))) {
      console.error(`${service.name} is needed on 127.0.0.1:${service.port} and could not be started`);
      process.exit(1);
    }
  }
}

/** RabbitMQ's STOMP plugin (the live-update relay) is off until enabled; the broker must be running already. */
async function ensureStomp() {
  if (await reachable(61613)) {
    return;
  }
  console.log("Enabling RabbitMQ's STOMP plugin (rabbitmq_stomp, port 61613)");
  spawnSync('rabbitmq-plugins', ['enable', 'rabbitmq_stomp'], { stdio: 'inherit' });
  for (let i = 0; i < 60 && !(await reachable(61613)); i++) {
    await new Promise((r) => setTimeout(r, 1000));
  }
  if (!(await reachable(61613))) {
    console.error("RabbitMQ's STOMP plugin is needed on 127.0.0.1:61613 and could not be enabled");
    process.exit(1);
  }
}

/**
 * Debian packages the tests drive, installed when missing: OpenLDAP's slapd and tools (the directory-login tests
 * start private servers) and Chromium (the web UI's browser tests; Playwright's own download does not work here).
 */
function ensurePackages() {
  const missing = [
    ['/usr/sbin/slapd', 'slapd'],
    ['/usr/bin/ldapmodify', 'ldap-utils'],
    ['/usr/bin/chromium', 'chromium'],
  ].filter(([file]) => !existsSync(file));
  if (!missing.length) {
    return;
  }
  const packages = missing.map(([, name]) => name);
  console.log(`Installing ${packages.join(', ')} (Debian packages) for the tests`);
  spawnSync('apt-get', ['install', '-y', '-q', ...packages], {
    stdio: 'inherit',
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
  });
}

await ensureServices();
await ensureStomp();
ensurePackages();
execFileSync('npm', ['run', 'build', '--silent'], { stdio: 'inherit' });

// Jest loads NestJS 12's ES modules through CommonJS packages (require(esm)), which it supports on Node ≥ 24.9;
// the `node` devDependency provides that Node whatever the machine's own is.
const localNode = join(root, 'node_modules', 'node', 'bin', 'node');
const nodeBin = existsSync(localNode) ? localNode : process.execPath;
mkdirSync('.tmp', { recursive: true });

// The web UI's component tests (Vitest, jsdom), unless Jest was asked for particular tests.
const vitestFile = join(root, '.tmp', 'vitest-results.json');
const vitest =
  process.argv.length > 2
    ? undefined
    : spawnSync(
        nodeBin,
        [
          join(
            dirname(createRequire(join(root, 'web', 'package.json')).resolve('vitest/package.json')),
            'vitest.mjs',
          ),
          'run',
          '--reporter=default',
          '--reporter=json',
          `--outputFile=${vitestFile}`,
        ],
        { stdio: 'inherit', cwd: join(root, 'web') },
      );
const resultsFile = join('.tmp', 'jest-results.json');
const jest = spawnSync(
  nodeBin,
  [
    '--experimental-vm-modules',
    '--no-warnings=ExperimentalWarning',
    'node_modules/jest/bin/jest.js',
    '--ci',
    '--json',
    `--outputFile=${resultsFile}`,
    ...process.argv.slice(2),
  ],
  { stdio: 'inherit' },
);

let passed = 0;
let failed = 0;
let skipped = 0;
for (const [file, name] of [
  [vitestFile, 'vitest'],
  [resultsFile, 'jest'],
]) {
  if (name === 'vitest' && !vitest) {
    continue;
  }
  if (!existsSync(file)) {
    console.log(`${name}: no results`);
    failed++;
    continue;
  }
  const r = JSON.parse(readFileSync(file, 'utf8'));
  passed += r.numPassedTests;
  failed += r.numFailedTests;
  skipped += r.numPendingTests + r.numTodoTests;
  if (r.numFailedTestSuites > 0 && r.numFailedTests === 0) {
    console.log(`(${name}: ${r.numFailedTestSuites} test suite(s) failed to run)`);
    failed++;
  }
}
console.log(`\njest and vitest: ${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exit(jest.status === 0 && (!vitest || vitest.status === 0) ? 0 : 1);
