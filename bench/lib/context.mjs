// What every section gets: the options, the chosen load generator, the processes under test (started once, on
// first use, shared by all sections), and measuring helpers that record CPU use alongside every load run.
import { startCpuMeter } from './cpu.mjs';
import { chooseTool, runLoad } from './load.mjs';
import { startBareApp, startService } from './services.mjs';
import { median } from './stats.mjs';

/** Other processes whose CPU is worth seeing during a load run (summed over all of them on the box). */
const BACKENDS = { postgres: /^postgres/, redis: /^redis-server/ };

export class BenchContext {
  #service;
  #bare;

  constructor(options, { logDir }) {
    this.options = options;
    this.logDir = logDir;
    this.tool = chooseTool(options.tool);
    this.log = (message) => console.log(`  · ${message}`);
  }

  /** The real service from dist/ (started on first call, then shared). See services.mjs for its shape. */
  service() {
    this.#service ??= (async () => {
      this.log('starting the service (node dist/main.js) on a fresh database…');
      const service = await startService({
        pgAdminUrl: this.options.pgAdminUrl,
        dbName: this.options.dbName,
        redisUrl: this.options.redisUrl,
        keepDb: this.options.keepDb,
        logDir: this.logDir,
      });
      this.log(
        `service ready at ${service.url} (pid ${service.pid}) after ${(service.bootMs / 1000).toFixed(1)} s`,
      );
      return service;
    })();
    return this.#service;
  }

  /**
   * Another instance of the service with extra settings (e.g. different limits), for a section that needs one;
   * own database and key prefix, stopped at the end like everything else. Not shared. `nodeArgs` replaces the
   * V8 flags it is shipped with (SERVICE_NODE_FLAGS).
   */
  async startServiceVariant(name, env, nodeArgs) {
    const service = await startService({
      name,
      env,
      nodeArgs,
      pgAdminUrl: this.options.pgAdminUrl,
      dbName: this.options.dbName,
      redisUrl: this.options.redisUrl,
      keepDb: this.options.keepDb,
      logDir: this.logDir,
    });
    this.log(`service variant ${name} ready at ${service.url} (pid ${service.pid})`);
    return service;
  }

  /** The bare NestJS app (bench/bare-app.mjs), started on first call. */
  bareApp() {
    this.#bare ??= (async () => {
      const bare = await startBareApp({ logDir: this.logDir });
      this.log(`bare Nest app ready at ${bare.routeUrl} (pid ${bare.pid})`);
      return bare;
    })();
    return this.#bare;
  }

  /**
   * One load run against `target` (a process handle with a pid). Refuses results with errors or non-2xx answers
   * unless allowErrors, since failing requests are cheap and would inflate the rate.
   */
  async load({
    target,
    url,
    method,
    headers,
    body,
    durationSec = this.options.durationSec,
    connections = this.options.connections,
    allowErrors = false,
  }) {
    const meter = startCpuMeter({ pids: { server: target.pid }, named: BACKENDS });
    const result = await runLoad(this.tool, {
      url,
      method,
      headers,
      body,
      connections,
      durationSec,
      workers: this.options.workers,
    });
    const { cores } = meter.stop({ loadgen: result.cpuSeconds });
    if (!allowErrors && (result.non2xx > 0 || result.errors > 0)) {
      throw new Error(
        `${method ?? 'GET'} ${url}: ${result.non2xx} non-2xx answers and ${result.errors} socket errors in ${result.requests} requests`,
      );
    }
    if (result.requests === 0) {
      throw new Error(`${url}: no request completed`);
    }
    return { ...result, cpu: cores };
  }

  /**
   * Throughput of several targets measured alternately — warm-up of each, then `rounds` rounds of A, B, … —
   * so that noise from the shared machine falls on all of them alike. Each target: { key, label, target, url,
   * method?, headers?, body? }. Returns { runs: [{round, key, label, ...loadResult}], medians: {key: {...}} }.
   */
  async compareThroughput(targets, { rounds = this.options.rounds } = {}) {
    if (this.options.warmupSec > 0) {
      for (const t of targets) {
        this.log(`warm-up ${t.label} (${this.options.warmupSec} s)`);
        await this.load({ ...t, durationSec: this.options.warmupSec });
      }
    }
    const runs = [];
    for (let round = 1; round <= rounds; round++) {
      for (const t of targets) {
        const result = await this.load(t);
        this.log(
          `round ${round}/${rounds} ${t.label}: ${Math.round(result.rps)} req/s, p99 ${result.latencyMs.p99.toFixed(1)} ms`,
        );
        runs.push({ round, key: t.key, label: t.label, url: t.url, ...result });
      }
    }
    const medians = {};
    for (const t of targets) {
      const mine = runs.filter((r) => r.key === t.key);
      const m = (pick) => median(mine.map(pick).filter((v) => v !== null && v !== undefined));
      medians[t.key] = {
        label: t.label,
        rps: m((r) => r.rps),
        p50Ms: m((r) => r.latencyMs.p50),
        p99Ms: m((r) => r.latencyMs.p99),
        cpu: Object.fromEntries(Object.keys(mine[0].cpu).map((k) => [k, m((r) => r.cpu[k])])),
      };
    }
    return { runs, medians };
  }
}
