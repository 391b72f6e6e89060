// CPU accounting from /proc (Linux), to see where a 2-core box spends its time during a load run: the process
// under test, the load generator, PostgreSQL, Redis, and the machine as a whole (which includes other tenants).
// Values are in cores (1.0 = one core busy for the whole run). Elsewhere than Linux everything reads as null.
import { readdirSync, readFileSync } from 'node:fs';

const TICKS_PER_SECOND = 100; // USER_HZ; `getconf CLK_TCK` is 100 on every Linux we run on

/** utime + stime of one process (all its threads), in seconds; null when it cannot be read. */
export function processCpuSeconds(pid) {
  try {
    return parseStatCpu(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return null;
  }
}

/** utime + stime in seconds from the text of a /proc/<pid>/stat file. */
export function parseStatCpu(stat) {
  // The command name (field 2) may contain spaces and parentheses: count fields after its closing ')'.
  const fields = stat
    .slice(stat.lastIndexOf(')') + 2)
    .trim()
    .split(/\s+/);
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND; // fields 14 and 15 of the whole line
}

function machineTicks() {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n')[0];
    const [, ...values] = line.trim().split(/\s+/).map(Number);
    const [user, nice, system, idle, iowait, irq, softirq, steal] = values;
    return {
      busy: user + nice + system + irq + softirq + steal,
      all: user + nice + system + idle + iowait + irq + softirq + steal,
    };
  } catch {
    return null;
  }
}

/** pid → cpu seconds of every process whose command name matches `re` (e.g. /^postgres/). */
function processesNamed(re) {
  const found = new Map();
  let entries;
  try {
    entries = readdirSync('/proc');
  } catch {
    return found;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) {
      continue;
    }
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      if (re.test(name)) {
        found.set(entry, parseStatCpu(stat));
      }
    } catch {
      // exited meanwhile
    }
  }
  return found;
}

/**
 * Starts measuring. `pids` maps a label to a pid (whose CPU is read at start and stop); `named` maps a label to
 * a command-name pattern (summed over matching processes; ones that appear meanwhile count from zero).
 * stop(overrides) returns { label: cores, machine: cores }; overrides supplies CPU seconds measured otherwise
 * (e.g. by a load generator that exits before stop()).
 */
export function startCpuMeter({ pids = {}, named = {} } = {}) {
  const t0 = performance.now();
  const machine0 = machineTicks();
  const pid0 = Object.fromEntries(
    Object.entries(pids).map(([label, pid]) => [label, processCpuSeconds(pid)]),
  );
  const named0 = Object.fromEntries(Object.entries(named).map(([label, re]) => [label, processesNamed(re)]));
  return {
    stop(overrides = {}) {
      const wall = (performance.now() - t0) / 1000;
      const cores = {};
      for (const [label, pid] of Object.entries(pids)) {
        const end = processCpuSeconds(pid);
        cores[label] = end === null || pid0[label] === null ? null : (end - pid0[label]) / wall;
      }
      for (const [label, re] of Object.entries(named)) {
        let seconds = 0;
        for (const [pid, end] of processesNamed(re)) {
          seconds += end - (named0[label].get(pid) ?? 0);
        }
        cores[label] = seconds / wall;
      }
      for (const [label, seconds] of Object.entries(overrides)) {
        cores[label] = seconds === null ? null : seconds / wall;
      }
      const machine1 = machineTicks();
      cores.machine = machine0 && machine1 ? (machine1.busy - machine0.busy) / TICKS_PER_SECOND / wall : null;
      return { wallSeconds: wall, cores };
    },
  };
}
