#!/usr/bin/env node
// `npm test`: prepares what the suite needs on this kind of machine (the databases, RabbitMQ's STOMP plugin, slapd),
// builds, then runs every Jest project (unit, integration, e2e) against the real services, and closes with one
// plain summary line.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import net from 'node:net';
import { dirname, join } from 'node:path';
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
  console.log('Enabling RabbitMQ\'s STOMP plugin (rabbitmq_stomp, port 61613)');
  spawnSync('rabbitmq-plugins', ['enable', 'rabbitmq_stomp'], { stdio: 'inherit' });
  for (let i = 0; i < 60 && !(await reachable(61613)); i++) {
    await new Promise((r) => setTimeout(r, 1000));
  }
  if (!(await reachable(61613))) {
    console.error('RabbitMQ\'s STOMP plugin is needed on 127.0.0.1:61613 and could not be enabled');
    process.exit(1);
  }
}

/** OpenLDAP's slapd and tools, from Debian's packages: the directory-login tests start private servers. */
function ensureSlapd() {
  if (existsSync('/usr/sbin/slapd') && existsSync('/usr/bin/ldapmodify')) {
    return;
  }
  console.log('Installing slapd and ldap-utils (Debian packages) for the directory-login tests');
  spawnSync('apt-get', ['install', '-y', '-q', 'slapd', 'ldap-utils'], {
    stdio: 'inherit',
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
  });
}

await ensureServices();
await ensureStomp();
ensureSlapd();
execFileSync('npm', ['run', 'build', '--silent'], { stdio: 'inherit' });

// Jest loads NestJS 12's ES modules through CommonJS packages (require(esm)), which it supports on Node ≥ 24.9;
// the `node` devDependency provides that Node whatever the machine's own is.
const localNode = join(root, 'node_modules', 'node', 'bin', 'node');
const nodeBin = existsSync(localNode) ? localNode : process.execPath;
mkdirSync('.tmp', { recursive: true });
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

if (existsSync(resultsFile)) {
  const r = JSON.parse(readFileSync(resultsFile, 'utf8'));
  const skipped = r.numPendingTests + r.numTodoTests;
  console.log(`\njest: ${r.numPassedTests} passed, ${r.numFailedTests} failed, ${skipped} skipped`);
  if (r.numFailedTestSuites > 0 && r.numFailedTests === 0) {
    console.log(`(${r.numFailedTestSuites} test suite(s) failed to run)`);
  }
}
process.exit(jest.status ?? 1);
