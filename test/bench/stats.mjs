// Nearest-rank percentile (no interpolation: every reported figure was observed).
export function pct(samples, p) {
  if (!samples.length) return NaN;
  const sorted = Float64Array.from(samples).sort();
  const rank = Math.ceil((p / 100) * sorted.length);
  return Math.round(sorted[Math.min(sorted.length, Math.max(1, rank)) - 1] * 1000) / 1000;
}
