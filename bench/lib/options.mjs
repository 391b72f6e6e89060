// Command-line options of bench/run.mjs (npm run bench -- --help).
import { parseArgs } from 'node:util';

export const USAGE = `Usage: npm run bench -- [options]
  --only=a,b            run only these sections (default: all; see the list below)
  --skip=a,b            leave these sections out
  --tool=auto|wrk|autocannon   load generator (auto: wrk when installed, else autocannon)
  --workers=N           autocannon worker threads (default: none; ignored by wrk)
  --connections=N       concurrent connections for throughput runs (default 50)
  --duration=S          seconds per measured throughput run (default 10)
  --warmup=S            seconds of warm-up per target before measuring (default 3)
  --rounds=N            alternating rounds per throughput comparison; medians are reported (default 3)
  --logins=N            sequential logins for the login-latency section (default 200)
  --ingest-results=N    results per measurement in the ingest section, sent 1000 a request (default 100000)
  --ingest-clients=N    concurrent clients posting results in the ingest section (default 4)
  --ingest-tests=both|rerun|new   both (default): each of the two below, in this run; rerun: the measured
                        results are of tests the project already has (a previous run of the same tests is sent first,
                        unmeasured), as CI reruns a suite; new: every result is of a test never seen before
  --import-cases=N      test cases of the JUnit file the import section imports (default 100000, ~47 MB)
  --import-big-mb=N     size of the large JUnit file whose import's peak RSS is measured (default 500; 0 skips)
  --live-sockets=N      sockets subscribed on replica B while the live section times events (default 1000)
  --live-events=N       runs created on replica A, each timed to its arrival on B's sockets (default 200)
  --live-idle=N         idle authenticated sockets opened on one replica to measure their memory (default 50000)
  --web-results=N       results of the run whose page the web section opens in Chromium (default 100000)
  --web-rounds=N        navigations to that page timed, without and with the browser's cache (default 7)
  --keep-db             keep the benchmark database afterwards
  --strict              exit 1 when a target is missed
  --out=FILE            results file (default bench/results/latest.json)
Environment: CHROMIUM_PATH (default /usr/bin/chromium, for the web section), BENCH_PG_URL (default postgres://postgres@127.0.0.1:5432/postgres, any database on the server),
  BENCH_DB_NAME (default tms_bench; dropped and recreated), BENCH_REDIS_URL (default redis://127.0.0.1:6379),
  BENCH_SERVICE_NODE_ARGS (extra node flags for the services started, e.g. --cpu-prof --cpu-prof-dir=/tmp/prof).`;

export function parseOptions(argv) {
  const { values } = parseArgs({
    args: argv,
    options: {
      only: { type: 'string' },
      skip: { type: 'string' },
      tool: { type: 'string', default: 'auto' },
      workers: { type: 'string' },
      connections: { type: 'string', default: '50' },
      duration: { type: 'string', default: '10' },
      warmup: { type: 'string', default: '3' },
      rounds: { type: 'string', default: '3' },
      logins: { type: 'string', default: '200' },
      'ingest-results': { type: 'string', default: '100000' },
      'ingest-clients': { type: 'string', default: '4' },
      'ingest-tests': { type: 'string', default: 'both' },
      'import-cases': { type: 'string', default: '100000' },
      'import-big-mb': { type: 'string', default: '500' },
      'live-sockets': { type: 'string', default: '1000' },
      'live-events': { type: 'string', default: '200' },
      'live-idle': { type: 'string', default: '50000' },
      'web-results': { type: 'string', default: '100000' },
      'web-rounds': { type: 'string', default: '7' },
      'keep-db': { type: 'boolean', default: false },
      strict: { type: 'boolean', default: false },
      out: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  const int = (name, min) => {
    const n = Number(values[name]);
    if (!Number.isInteger(n) || n < min) {
      throw new Error(`--${name} must be an integer ≥ ${min}`);
    }
    return n;
  };
  if (!['both', 'rerun', 'new'].includes(values['ingest-tests'])) {
    throw new Error('--ingest-tests must be both, rerun or new');
  }
  if (!['auto', 'wrk', 'autocannon'].includes(values.tool)) {
    throw new Error('--tool must be auto, wrk or autocannon');
  }
  const list = (text) =>
    text
      ? text
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean)
      : undefined;
  return {
    help: values.help,
    only: list(values.only),
    skip: list(values.skip) ?? [],
    tool: values.tool,
    workers: values.workers === undefined ? undefined : int('workers', 1),
    connections: int('connections', 1),
    durationSec: int('duration', 1),
    warmupSec: int('warmup', 0),
    rounds: int('rounds', 1),
    logins: int('logins', 1),
    ingestResults: int('ingest-results', 1000),
    ingestClients: int('ingest-clients', 1),
    ingestTests: values['ingest-tests'],
    importCases: int('import-cases', 1000),
    importBigMb: int('import-big-mb', 0),
    liveSockets: int('live-sockets', 1),
    liveEvents: int('live-events', 1),
    liveIdle: int('live-idle', 0),
    webResults: int('web-results', 1),
    webRounds: int('web-rounds', 1),
    keepDb: values['keep-db'],
    strict: values.strict,
    out: values.out,
    pgAdminUrl: process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
    dbName: process.env.BENCH_DB_NAME ?? 'tms_bench',
    redisUrl: process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379',
  };
}
