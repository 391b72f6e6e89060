import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LoggerService } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { DataSource } from 'typeorm';
import { getDataSourceToken } from '@nestjs/typeorm';
import { createApp } from '../../src/app.factory.js';
import { AppConfig } from '../../src/config/app-config.js';
import { KeyValueStore } from '../../src/infra/kv/key-value-store.js';
import { createTestDatabase, TestDatabase } from './database.js';
import { freePort, requireBuild, runService, ServiceProcess, waitForHttp } from './process.js';
import { TEST_REDIS_URL } from './services.js';

export const ADMIN_EMAIL = 'admin@example.com';
export const ADMIN_PASSWORD = 'bootstrap-admin-password-1';

export interface RunningApp {
  app: NestExpressApplication;
  url: string;
  config: AppConfig;
  dataSource: DataSource;
  kv: KeyValueStore;
  close(): Promise<void>;
}

/**
 * The whole service on a random port, against real PostgreSQL and Redis. Several calls with the same
 * `shared` settings behave as replicas of one deployment.
 */
function testEnv(env: Record<string, string>): Record<string, string> {
  return {
    SVC_JWT_SECRET: 'test-secret-that-is-long-enough-for-hs256-0123',
    SVC_KVSTORE_URL: TEST_REDIS_URL,
    SVC_KVSTORE_PREFIX: `test:${randomBytes(4).toString('hex')}:`,
    SVC_BOOTSTRAP_ADMIN_EMAIL: ADMIN_EMAIL,
    SVC_BOOTSTRAP_ADMIN_PASSWORD: ADMIN_PASSWORD,
    SVC_COOKIE_SECURE: 'false',
    SVC_DATA_DIR: mkdtempSync(join(tmpdir(), 'tms-test-')),
    SVC_LOG_LEVEL: 'error',
    ...env,
  };
}

/** `logger`: one that keeps what is logged (test/support/logs.ts), for tests of the logs; else errors only. */
export async function startApp(
  env: Record<string, string> = {},
  options: { logger?: LoggerService } = {},
): Promise<RunningApp> {
  const vars = testEnv(env);
  const config = AppConfig.load(vars);
  const app = await createApp(config, { logger: options.logger ?? ['error'] });
  await app.listen(0, '127.0.0.1');
  const address = app.getHttpServer().address() as { port: number };
  return {
    app,
    url: `http://127.0.0.1:${address.port}`,
    config,
    dataSource: app.get<DataSource>(getDataSourceToken()),
    kv: app.get(KeyValueStore),
    close: async () => {
      await app.close();
      rmSync(vars.SVC_DATA_DIR, { recursive: true, force: true });
    },
  };
}

export interface ProcessReplica {
  url: string;
  pid: number;
  output: () => string;
  /** Sends the process `signal` (SIGSTOP, SIGCONT, ...) without waiting. */
  signal: (signal: NodeJS.Signals) => void;
  /** Sends the process `signal` and waits for it to exit (SIGKILL: a crash, nothing cleaned up). */
  kill: (signal: NodeJS.Signals) => Promise<void>;
}

/** One test file's deployment: its own database, and replicas that share it and one Redis key prefix. */
export class TestDeployment {
  readonly replicas: RunningApp[] = [];
  private readonly processes: ServiceProcess[] = [];
  private readonly dataDirs: string[] = [];
  private database?: TestDatabase;
  private readonly prefix = `test:${randomBytes(4).toString('hex')}:`;

  constructor(private readonly env: Record<string, string> = {}) {}

  async start(replicas = 1): Promise<RunningApp[]> {
    this.database = await createTestDatabase();
    for (let i = 0; i < replicas; i++) {
      this.replicas.push(
        await startApp({ SVC_DB_URL: this.database.url, SVC_KVSTORE_PREFIX: this.prefix, ...this.env }),
      );
    }
    return this.replicas;
  }

  /**
   * A replica in a process of its own (the built dist/main.js), for behaviour that must hold between
   * processes: nothing in-process (caches, Passport's registry) is shared with the test's replicas.
   */
  async startProcessReplica(): Promise<ProcessReplica> {
    requireBuild();
    const port = await freePort();
    const vars = testEnv({
      SVC_DB_URL: this.database!.url,
      SVC_KVSTORE_PREFIX: this.prefix,
      PORT: String(port),
      SVC_LOG_LEVEL: 'warn',
      ...this.env,
    });
    const proc = runService([], vars);
    this.processes.push(proc);
    this.dataDirs.push(vars.SVC_DATA_DIR);
    const url = `http://127.0.0.1:${port}`;
    await waitForHttp(`${url}/api/health/ready`, proc);
    return {
      url,
      pid: proc.child.pid!,
      output: () => proc.output(),
      signal: (signal) => void proc.child.kill(signal),
      kill: async (signal) => {
        proc.child.kill(signal);
        await proc.exited;
      },
    };
  }

  /** Closes the in-process replicas, leaving process replicas (and the database) running. */
  async closeReplicas(): Promise<void> {
    await Promise.all(this.replicas.splice(0).map((r) => r.close()));
  }

  async stop(): Promise<void> {
    for (const proc of this.processes) {
      proc.child.kill('SIGTERM');
      await proc.exited;
    }
    await Promise.all(this.replicas.map((r) => r.close()));
    await this.database?.drop();
    for (const dir of this.dataDirs) {
      rmSync(dir, { recursive: true, force: true });
    }
  }
}
