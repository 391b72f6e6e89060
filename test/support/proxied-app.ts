import { RunningApp, startApp } from './app.js';
import { createTestDatabase, TestDatabase } from './database.js';
import { TEST_REDIS_URL } from './services.js';
import { endpointOf, TcpProxy } from './tcp-proxy.js';

export interface ProxiedApp {
  svc: RunningApp;
  database: TestDatabase;
  /** Between the service and PostgreSQL: cut() drops every connection and refuses new ones; restore() reopens. */
  pgProxy: TcpProxy;
  /** Between the service and Redis, likewise. */
  kvProxy: TcpProxy;
  stop(): Promise<void>;
}

/** The service on a fresh database, reaching PostgreSQL and Redis through TCP proxies a test cuts and restores. */
export async function startProxiedApp(env: Record<string, string> = {}): Promise<ProxiedApp> {
  const database = await createTestDatabase();
  const pgProxy = new TcpProxy(endpointOf(database.url, 5432));
  const kvProxy = new TcpProxy(endpointOf(TEST_REDIS_URL, 6379));
  await pgProxy.start();
  await kvProxy.start();
  const svc = await startApp({
    SVC_DB_URL: pgProxy.through(database.url),
    SVC_KVSTORE_URL: kvProxy.through(TEST_REDIS_URL),
    ...env,
  });
  return {
    svc,
    database,
    pgProxy,
    kvProxy,
    stop: async () => {
      await pgProxy.restore().catch(() => undefined);
      await kvProxy.restore().catch(() => undefined);
      await svc.close();
      await pgProxy.cut();
      await kvProxy.cut();
      await database.drop();
    },
  };
}
