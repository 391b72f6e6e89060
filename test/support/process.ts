import { ChildProcess, spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import net from 'node:net';
import { resolve } from 'node:path';

export const DIST_MAIN = resolve('dist/main.js');

export function requireBuild(): void {
  if (!existsSync(DIST_MAIN)) {
    throw new Error('dist/main.js is missing: run `npm run build` (npm test does it first)');
  }
}

export function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => done(port));
    });
    server.on('error', fail);
  });
}

export interface ServiceProcess {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

/** Runs the built service with exactly `env` (plus PATH/HOME), never inheriting the test's variables. */
export function runService(args: string[], env: Record<string, string>): ServiceProcess {
  const child = spawn(process.execPath, [DIST_MAIN, ...args], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/root', NO_COLOR: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let text = '';
  child.stdout.on('data', (c: Buffer) => (text += c.toString()));
  child.stderr.on('data', (c: Buffer) => (text += c.toString()));
  const exited = new Promise<number | null>((done) => child.on('exit', (code) => done(code)));
  return { child, output: () => text, exited };
}

/**
 * For a process that should exit by itself: its exit code, or 'still running' (and it is killed) after `timeoutMs`,
 * so that a test expecting an exit fails instead of leaving the service running.
 */
export async function exitOf(proc: ServiceProcess, timeoutMs = 20_000): Promise<number | null | 'still running'> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'still running'>((done) => {
    timer = setTimeout(() => done('still running'), timeoutMs);
  });
  const outcome = await Promise.race([proc.exited, late]);
  clearTimeout(timer);
  if (outcome === 'still running') {
    proc.child.kill('SIGKILL');
    await proc.exited;
  }
  return outcome;
}

export async function waitForHttp(url: string, proc: ServiceProcess, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (proc.child.exitCode !== null) {
      throw new Error(`the service exited early:\n${proc.output()}`);
    }
    try {
      const res = await fetch(url);
      if (res.ok) {
        return;
      }
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`the service did not answer in time:\n${proc.output()}`);
}

/** The local ports of process `pid`'s TCP connections to `remotePort` (from /proc: Linux only). */
export function tcpPortsOf(pid: number, remotePort: number): number[] {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const inode = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`))?.[1];
      if (inode) {
        inodes.add(inode);
      }
    } catch {
      // closed meanwhile
    }
  }
  const ports: number[] = [];
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of readFileSync(table, 'utf8').split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      if (cols.length > 9 && inodes.has(cols[9]) && parseInt(cols[2].split(':')[1], 16) === remotePort) {
        ports.push(parseInt(cols[1].split(':')[1], 16));
      }
    }
  }
  return ports;
}
