// Plain-text tables for the console.

/** Formats `rows` (arrays of cells) under `headers` as an aligned table; numbers are right-aligned. */
export function formatTable(headers, rows) {
  const cells = rows.map((row) =>
    row.map((cell) => (cell === null || cell === undefined ? '–' : String(cell))),
  );
  const widths = headers.map((h, i) => Math.max(h.length, ...cells.map((row) => row[i]?.length ?? 0)));
  const numeric = headers.map(
    (_, i) => rows.length > 0 && rows.every((row) => typeof row[i] === 'number' || row[i] == null),
  );
  const line = (row) =>
    row
      .map((cell, i) => (numeric[i] ? cell.padStart(widths[i]) : cell.padEnd(widths[i])))
      .join('  ')
      .trimEnd();
  return [line(headers), widths.map((w) => '-'.repeat(w)).join('  '), ...cells.map(line)].join('\n');
}

/** Fixed-decimal number for a table cell (kept a number for alignment when possible). */
export function fmt(value, digits = 1) {
  return Number.isFinite(value) ? Number(value.toFixed(digits)) : null;
}

/** A number with thousands separators, as a string (right-aligned only if the whole column is). */
export function thousands(value) {
  return Number.isFinite(value) ? Math.round(value).toLocaleString('en-US') : null;
}

/** The table of a compareThroughput() result: one row per run, CPU in cores. */
export function runsTable(runs) {
  return {
    headers: [
      'round',
      'target',
      'req/s',
      'p50 ms',
      'p99 ms',
      'server cpu',
      'loadgen cpu',
      'postgres cpu',
      'redis cpu',
      'machine cpu',
    ],
    rows: runs.map((r) => [
      r.round,
      r.label,
      fmt(r.rps, 0),
      fmt(r.latencyMs.p50, 2),
      fmt(r.latencyMs.p99, 2),
      fmt(r.cpu.server, 2),
      fmt(r.cpu.loadgen, 2),
      fmt(r.cpu.postgres, 2),
      fmt(r.cpu.redis, 2),
      fmt(r.cpu.machine, 2),
    ]),
  };
}
