import {
  LATENCY_BUCKETS,
  LATENCY_BUCKET_BOUNDS_MS,
  latencyAdds,
  latencyBucket,
  latencyCounter,
  percentileFromBuckets,
} from '../../functions/calling/latency-histogram.js';

const countsOf = (latencies: number[]): number[] => {
  const adds = latencyAdds(latencies);
  return Array.from({ length: LATENCY_BUCKETS }, (_, i) => adds[latencyCounter(i)] ?? 0);
};

describe('turn latency histogram', () => {
  it('puts each latency in the first bucket whose bound it does not exceed; above the last, the open bucket', () => {
    expect(latencyBucket(0)).toBe(0);
    expect(latencyBucket(100)).toBe(0);
    expect(latencyBucket(101)).toBe(1);
    expect(latencyBucket(1000)).toBe(9);
    expect(latencyBucket(1001)).toBe(10);
    expect(latencyBucket(10_000)).toBe(LATENCY_BUCKET_BOUNDS_MS.length - 1);
    expect(latencyBucket(60_000)).toBe(LATENCY_BUCKETS - 1);
    expect(latencyBucket(-5)).toBe(0);
    expect(latencyBucket(Number.NaN)).toBe(0);
  });

  it('counts each latency once, by bucket counter', () => {
    expect(latencyAdds([120, 150, 980, 20_000])).toEqual({
      turnLatency01: 2,
      turnLatency09: 1,
      turnLatency21: 1,
    });
    expect(latencyAdds([])).toEqual({});
  });

  it('gives the median to within a bucket of the exact one', () => {
    const latencies = [220, 340, 410, 450, 480, 520, 610, 700, 900, 1300, 2600];
    const exact = [...latencies].sort((a, b) => a - b)[Math.floor(latencies.length / 2)] ?? 0;
    const p50 = percentileFromBuckets(countsOf(latencies), 50);
    expect(p50).not.toBeNull();
    expect(Math.abs((p50 as number) - exact)).toBeLessThanOrEqual(100);
  });

  it('interpolates inside the bucket, and is null without turns', () => {
    // Two turns in 400–500 ms: the median is the bucket's middle.
    expect(percentileFromBuckets(countsOf([450, 460]), 50)).toBe(450);
    expect(percentileFromBuckets(countsOf([50]), 50)).toBe(50);
    expect(percentileFromBuckets(countsOf([30_000]), 50)).toBe(10_000);
    expect(percentileFromBuckets(countsOf([]), 50)).toBeNull();
  });

  it('adds across days: the sum of two days’ buckets is the buckets of both days’ turns', () => {
    const a = countsOf([300, 800]);
    const b = countsOf([1500, 350, 90]);
    const summed = a.map((n, i) => n + (b[i] ?? 0));
    expect(summed).toEqual(countsOf([300, 800, 1500, 350, 90]));
  });
});
