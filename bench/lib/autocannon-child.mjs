// Runs one autocannon load in its own process (so its CPU can be told apart from everything else) and prints
// the result as one JSON line. Argument: the autocannon options as JSON.
import autocannon from 'autocannon';

const options = JSON.parse(process.argv[2]);
const result = await autocannon(options);
const cpu = process.cpuUsage();
process.stdout.write(
  `${JSON.stringify({
    requests: result.requests.total,
    durationSec: result.duration,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    latencyMs: {
      mean: result.latency.mean,
      p50: result.latency.p50,
      p90: result.latency.p90,
      p99: result.latency.p99,
      max: result.latency.max,
    },
    cpuSeconds: (cpu.user + cpu.system) / 1e6,
  })}\n`,
);
