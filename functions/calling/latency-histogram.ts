/**
 * Turn latency kept as a histogram beside the day counters (call-stats.ts): counters cannot give a
 * median, fixed buckets can (to within a bucket's width). A turn's latency is the caller's words in →
 * the agent's first words out (the call detail's `latency.total_ms`). Bucket `i` counts the turns of
 * at most `LATENCY_BUCKET_BOUNDS_MS[i]` milliseconds (and more than the bound before it); the last
 * bucket counts everything slower than the last bound. The bounds never change (stored counters
 * refer to them by position): a new bound would be a new set of counters.
 */
export const LATENCY_BUCKET_BOUNDS_MS = [
  100, 200, 300, 400, 500, 600, 700, 800, 900, 1000, 1200, 1400, 1600, 1800, 2000, 2500, 3000, 4000, 5000,
  7500, 10_000,
] as const;

/** The number of buckets: one per bound, and one above the last. */
export const LATENCY_BUCKETS = LATENCY_BUCKET_BOUNDS_MS.length + 1;

/** The counter attribute of bucket `i` (`turnLatency00` … `turnLatency21`). */
export const latencyCounter = (i: number): string => `turnLatency${String(i).padStart(2, '0')}`;
export const LATENCY_COUNTERS: readonly string[] = Array.from({ length: LATENCY_BUCKETS }, (_, i) =>
  latencyCounter(i),
);

/** The bucket a latency falls in. */
export function latencyBucket(ms: number): number {
  const value = Number.isFinite(ms) ? Math.max(0, ms) : 0;
  const i = LATENCY_BUCKET_BOUNDS_MS.findIndex((bound) => value <= bound);
  return i === -1 ? LATENCY_BUCKETS - 1 : i;
}

/** The bucket counts of some latencies, as counter additions (only buckets with turns). */
export function latencyAdds(latenciesMs: readonly number[]): Record<string, number> {
  const adds: Record<string, number> = {};
  for (const ms of latenciesMs) {
    const key = latencyCounter(latencyBucket(ms));
    adds[key] = (adds[key] ?? 0) + 1;
  }
  return adds;
}

/**
 * A percentile from bucket counts: the bucket that holds the rank, interpolated linearly inside it
 * (its lower edge is the bound before it, 0 for the first); a rank in the open last bucket is its
 * lower edge (the last bound). Null when there are no turns. Rounded to a millisecond.
 */
export function percentileFromBuckets(counts: readonly number[], p: number): number | null {
  const total = counts.reduce((sum, n) => sum + n, 0);
  if (total === 0) return null;
  const rank = (p / 100) * total;
  let below = 0;
  for (let i = 0; i < counts.length; i += 1) {
    const n = counts[i] ?? 0;
    if (n > 0 && below + n >= rank) {
      const low = i === 0 ? 0 : LATENCY_BUCKET_BOUNDS_MS[i - 1];
      const high = LATENCY_BUCKET_BOUNDS_MS[i];
      if (low === undefined) return null;
      if (high === undefined) return low;
      return Math.round(low + ((rank - below) / n) * (high - low));
    }
    below += n;
  }
  return LATENCY_BUCKET_BOUNDS_MS[LATENCY_BUCKET_BOUNDS_MS.length - 1] ?? null;
}
