import { stackState } from './stack-state.js';

/**
 * The local stack's own counters (GET /_local/metrics, lib/local/metrics.ts): DynamoDB requests by
 * catalog function and command, and queue messages sent by queue. A test reads them at two quiescent
 * points and compares what one path asked of AWS between them.
 */
export interface StackCounters {
  dynamodb_by_function: Record<string, Record<string, number>>;
  queue_messages_sent: Record<string, number>;
  /** The service's own metrics recorded (functions/platform/metrics.ts), by name: how many values. */
  service_metrics: Record<string, { count: number }>;
  /** Items written by catalog function, then partition key value. */
  dynamodb_writes_by_function_key: Record<string, Record<string, number>>;
}

export async function stackCounters(): Promise<StackCounters> {
  const res = await fetch(`${stackState().base_url}/_local/metrics`);
  return (await res.json()) as StackCounters;
}

/** The DynamoDB requests `fnId` made between two reads of the counters, by command (unused ones left out). */
export function requestsBetween(
  before: StackCounters,
  after: StackCounters,
  fnId: string,
): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [command, n] of Object.entries(after.dynamodb_by_function[fnId] ?? {})) {
    const delta = n - (before.dynamodb_by_function[fnId]?.[command] ?? 0);
    if (delta !== 0) out[command] = delta;
  }
  return out;
}

export const totalOf = (commands: Record<string, number>): number =>
  Object.values(commands).reduce((sum, n) => sum + n, 0);

/** The items `fnId` wrote between two reads of the counters, by partition key (unwritten keys left out). */
export function writesBetween(
  before: StackCounters,
  after: StackCounters,
  fnId: string,
): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [pk, n] of Object.entries(after.dynamodb_writes_by_function_key[fnId] ?? {})) {
    const delta = n - (before.dynamodb_writes_by_function_key[fnId]?.[pk] ?? 0);
    if (delta !== 0) out[pk] = delta;
  }
  return out;
}
