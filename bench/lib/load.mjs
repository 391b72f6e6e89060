// HTTP load generation for the throughput sections: wrk when it is installed (a C program — on a 2-core box it
// leaves far more CPU to the server than autocannon, which is JavaScript), autocannon otherwise. Both run as
// child processes; each result carries the CPU the generator used so its share of the machine is visible.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseStatCpu } from './cpu.mjs';
import { spawnTracked } from './processes.mjs';

const HERE = fileURLToPath(new URL('.', import.meta.url));

/** 'wrk' with its version when wrk is on the PATH, else null. */
export function detectWrk() {
  const probe = spawnSync('wrk', ['-v'], { encoding: 'utf8' });
  if (probe.error) {
    return null;
  }
  const version = `${probe.stdout}${probe.stderr}`.match(/^wrk\s+(\S+)/m)?.[1];
  return version ? { tool: 'wrk', version } : null;
}

/** Picks the load generator: `requested` ('wrk' | 'autocannon' | 'auto'). */
export function chooseTool(requested = 'auto') {
  const wrk = detectWrk();
  if (requested === 'wrk' && !wrk) {
    throw new Error('--tool=wrk asked for, but wrk is not installed (apt-get install -y wrk)');
  }
  if (requested === 'wrk' || (requested === 'auto' && wrk)) {
    return wrk;
  }
  return { tool: 'autocannon', version: autocannonVersion() };
}

function autocannonVersion() {
  try {
    return createRequire(import.meta.url)('autocannon/package.json').version;
  } catch {
    throw new Error('autocannon is not installed: npm install -D autocannon (or install wrk)');
  }
}

/**
 * One load run. Resolves to { tool, requests, durationSec, rps, latencyMs: {mean,p50,p90,p99,max},
 * non2xx, errors, cpuSeconds } — cpuSeconds being the generator's own CPU time.
 */
export async function runLoad(
  tool,
  { url, method = 'GET', headers = {}, body, connections = 50, durationSec = 10, workers },
) {
  return tool.tool === 'wrk'
    ? runWrk({ url, method, headers, body, connections, durationSec })
    : runAutocannon({ url, method, headers, body, connections, durationSec, workers });
}

async function runWrk({ url, method, headers, body, connections, durationSec }) {
  let bodyDir;
  const env = { ...process.env, BENCH_METHOD: method };
  if (body !== undefined) {
    bodyDir = mkdtempSync(join(tmpdir(), 'bench-body-'));
    env.BENCH_BODY_FILE = join(bodyDir, 'body');
    writeFileSync(env.BENCH_BODY_FILE, typeof body === 'string' ? body : JSON.stringify(body));
  }
  const args = [
    '-t',
    '1',
    '-c',
    String(connections),
    '-d',
    `${durationSec}s`,
    '--timeout',
    '10s',
    '-s',
    join(HERE, 'wrk-report.lua'),
  ];
  for (const [name, value] of Object.entries(headers)) {
    args.push('-H', `${name}: ${value}`);
  }
  args.push(url);
  try {
    const { stdout, stderr, code } = await collect(
      spawnTracked('wrk', args, { env, stdio: ['ignore', 'pipe', 'pipe'] }),
    );
    const json = stdout.match(/^BENCH_JSON (.*)$/m)?.[1];
    if (code !== 0 || !json) {
      throw new Error(`wrk failed (exit ${code}): ${stderr || stdout}`);
    }
    const report = JSON.parse(json);
    const stat = stdout.match(/^BENCH_STAT (.*)$/m)?.[1];
    const durationSecMeasured = report.durationUs / 1e6;
    const ms = (us) => us / 1000;
    return {
      tool: 'wrk',
      requests: report.requests,
      durationSec: durationSecMeasured,
      rps: report.requests / durationSecMeasured,
      latencyMs: {
        mean: ms(report.latencyUs.mean),
        p50: ms(report.latencyUs.p50),
        p90: ms(report.latencyUs.p90),
        p99: ms(report.latencyUs.p99),
        max: ms(report.latencyUs.max),
      },
      non2xx: report.errors.status, // wrk counts statuses above 399
      errors: report.errors.connect + report.errors.read + report.errors.write + report.errors.timeout,
      cpuSeconds: stat ? parseStatCpu(stat) : null,
    };
  } finally {
    if (bodyDir) {
      rmSync(bodyDir, { recursive: true, force: true });
    }
  }
}

async function runAutocannon({ url, method, headers, body, connections, durationSec, workers }) {
  const options = { url, method, headers, connections, duration: durationSec, timeout: 10 };
  if (body !== undefined) {
    options.body = typeof body === 'string' ? body : JSON.stringify(body);
  }
  if (workers) {
    options.workers = workers;
  }
  const child = spawnTracked(
    process.execPath,
    [join(HERE, 'autocannon-child.mjs'), JSON.stringify(options)],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const { stdout, stderr, code } = await collect(child);
  const line = stdout.trim().split('\n').pop();
  if (code !== 0 || !line?.startsWith('{')) {
    throw new Error(`autocannon failed (exit ${code}): ${stderr || stdout}`);
  }
  const report = JSON.parse(line);
  return {
    tool: 'autocannon',
    requests: report.requests,
    durationSec: report.durationSec,
    rps: report.requests / report.durationSec,
    latencyMs: report.latencyMs,
    non2xx: report.non2xx,
    errors: report.errors + report.timeouts,
    cpuSeconds: report.cpuSeconds,
  };
}

function collect(child) {
  return new Promise((resolve, reject) => {
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk) => (stderr += chunk));
    child.once('error', reject);
    child.once('close', (code, signal) => resolve({ stdout, stderr, code: code ?? signal }));
  });
}
