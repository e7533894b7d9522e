/** Latency and throughput of an operation, run one at a time or by several loops at once. */

export interface LatencySummary {
  count: number;
  p50: number;
  p90: number;
  p99: number;
  mean: number;
}

export interface Throughput {
  concurrency: number;
  operations: number;
  seconds: number;
  /** Operations completed per second. */
  perSecond: number;
  latency: LatencySummary;
}

export function summarise(samples: number[]): LatencySummary {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
  const mean = sorted.reduce((s, v) => s + v, 0) / sorted.length;
  return { count: sorted.length, p50: at(0.5), p90: at(0.9), p99: at(0.99), mean };
}

const since = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e6;

/** Runs of an operation: their latencies (ms), and the wall-clock seconds they took together. */
export interface Runs {
  times: number[];
  seconds: number;
}

/** `op` run `samples` times one after another, from `firstIndex`; milliseconds per run. */
export async function sequential(
  op: (index: number) => Promise<void>,
  samples: number,
  firstIndex = 0,
): Promise<Runs> {
  const times: number[] = [];
  const started = process.hrtime.bigint();
  for (let i = 0; i < samples; i += 1) {
    const start = process.hrtime.bigint();
    await op(firstIndex + i);
    times.push(since(start));
  }
  return { times, seconds: since(started) / 1000 };
}

/**
 * `operations` runs of `op` shared by `concurrency` loops, each starting its next run when its last
 * one ends (a closed loop, as `concurrency` clients would).
 */
export async function concurrent(
  op: (index: number) => Promise<void>,
  concurrency: number,
  operations: number,
  firstIndex = 0,
): Promise<Runs> {
  let next = 0;
  const times: number[] = [];
  const started = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < operations) {
        const index = next++;
        const start = process.hrtime.bigint();
        await op(firstIndex + index);
        times.push(since(start));
      }
    }),
  );
  return { times, seconds: since(started) / 1000 };
}

/** Runs taken in several rounds, as one: latencies together, throughput over their total time. */
export function combine(runs: Runs[], concurrency: number): Throughput {
  const times = runs.flatMap((r) => r.times);
  const seconds = runs.reduce((sum, r) => sum + r.seconds, 0);
  return {
    concurrency,
    operations: times.length,
    seconds,
    perSecond: times.length / seconds,
    latency: summarise(times),
  };
}
