/**
 * What a function used of the services it pays for by request or by byte — S3 requests and bytes,
 * API Gateway messages, queue requests, model tokens — told to whoever listens. Nothing listens in the
 * cloud (CloudWatch and the bill count these there); the local stack's cost counters do
 * (lib/local/metrics.ts, `GET /_local/metrics`), which `npm run bench`'s cost part prices.
 * Kinds are `<service>:<what>` (`s3:PutObject`, `s3:bytes_put`, `model:input_tokens`).
 */
type UsageListener = (kind: string, amount: number) => void;

const listeners: UsageListener[] = [];

export function onUsage(listener: UsageListener): void {
  listeners.push(listener);
}

export function recordUsage(kind: string, amount = 1): void {
  for (const listener of listeners) listener(kind, amount);
}
