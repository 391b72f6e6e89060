// Small statistics helpers shared by the sections.

/** The p-th percentile (0–100) of `values`, by linear interpolation between closest ranks. */
export function percentile(values, p) {
  if (!values.length) {
    return NaN;
  }
  const sorted = [...values].sort((a, b) => a - b);
  const rank = (p / 100) * (sorted.length - 1);
  const low = Math.floor(rank);
  const high = Math.ceil(rank);
  return sorted[low] + (sorted[high] - sorted[low]) * (rank - low);
}

export function median(values) {
  return percentile(values, 50);
}

export function mean(values) {
  return values.length ? values.reduce((a, b) => a + b, 0) / values.length : NaN;
}

/** count, mean, min, p50, p90, p99, max of a list of samples. */
export function summarize(values) {
  return {
    count: values.length,
    mean: mean(values),
    min: Math.min(...values),
    p50: percentile(values, 50),
    p90: percentile(values, 90),
    p99: percentile(values, 99),
    max: Math.max(...values),
  };
}

export function round(value, digits = 2) {
  const f = 10 ** digits;
  return Number.isFinite(value) ? Math.round(value * f) / f : value;
}
