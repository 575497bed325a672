/** Small helpers shared by the benchmarks: percentiles, medians, formatting. */
export function percentile(values, p) {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

export const median = (values) => percentile(values, 50);

export const fmt = (n, digits = 1) => (Number.isFinite(n) ? n.toFixed(digits) : String(n));
