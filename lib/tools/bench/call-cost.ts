import type { ProcessMetrics, StackMetrics } from '../../local/metrics.js';
import type { BenchStack } from './stack-process.js';
import { startCallClient } from './start-call.js';

/**
 * The cost of a call, end to end: start-call → dispatched → played by the telephony simulator →
 * completed (status callbacks, the recording) → the post-call pipeline → the post-call webhook
 * delivered to the demo receiver. After `warmupCalls` calls that are not counted, `calls` calls are
 * started one after another between two quiescent points of the stack; the difference of its counters (GET /_local/metrics) over the calls is the
 * cost of one: DynamoDB requests by command (and the items they named), queue messages sent, and the
 * CPU of the stack's Node processes — less what the stack spends idle over the same time (its pollers'
 * long polls, the quiescence reads), measured just before — and DynamoDB Local's CPU, likewise.
 */
/** Issue 34's budget: the budget's call, start-call to the post-call webhook, in DynamoDB requests. */
export const CALL_COST_BUDGET = { dynamodbRequests: 40 } as const;

export interface CallCost {
  calls: number;
  /** Per call. */
  dynamodb: Record<string, number>;
  dynamodb_reads: number;
  dynamodb_writes: number;
  dynamodb_items: Record<string, number>;
  queue_messages_sent: Record<string, number>;
  queue_messages: number;
  cpu_ms: number;
  /** Per process of the stack, per call (idle share not taken off). */
  cpu_ms_by_process: Record<string, number>;
  /** DynamoDB requests per call by catalog function. */
  dynamodb_by_function: Record<string, Record<string, number>>;
  /** The stack's own idle CPU, ms per second, taken off `cpu_ms`. */
  idle_cpu_ms_per_second: number;
  /** Java's (DynamoDB Local's) CPU per call, where readable, less its own idle rate over the same time. */
  dynamodb_local_cpu_ms?: number;
  /** DynamoDB Local's idle CPU, ms per second, taken off `dynamodb_local_cpu_ms`. */
  dynamodb_local_idle_cpu_ms_per_second?: number;
  seconds: number;
}

const READS = new Set(['GetItem', 'BatchGetItem', 'Query', 'Scan', 'TransactGetItems']);
const WRITES = new Set(['PutItem', 'UpdateItem', 'DeleteItem', 'BatchWriteItem', 'TransactWriteItems']);

const diff = (after: Record<string, number>, before: Record<string, number>, per: number) => {
  const out: Record<string, number> = {};
  for (const [key, value] of Object.entries(after)) {
    const delta = (value - (before[key] ?? 0)) / per;
    if (delta !== 0) out[key] = round(delta);
  }
  return out;
};
const round = (n: number) => Math.round(n * 100) / 100;
const sum = (record: Record<string, number>, keep: (key: string) => boolean = () => true) =>
  round(Object.entries(record).reduce((s, [k, v]) => (keep(k) ? s + v : s), 0));
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function receivedCallEnded(receiverUrl: string, callIds: Set<string>): Promise<number> {
  const response = await fetch(receiverUrl);
  const { received } = (await response.json()) as {
    received: { type: string | null; call_id: string | null; verified: boolean }[];
  };
  return new Set(
    received
      .filter((r) => r.verified && r.type === 'call.ended' && r.call_id && callIds.has(r.call_id))
      .map((r) => r.call_id),
  ).size;
}

/** Starts `calls` calls one after another; resolves once each one's post-call webhook was delivered. */
async function runCalls(
  stack: BenchStack,
  input: { workspaceId: string; agentId: string; apiKey: string; toPhone: string },
  calls: number,
  receiverUrl: string,
): Promise<void> {
  const client = startCallClient({ ...input, baseUrl: stack.state.base_url, maxSockets: 1 });
  for (let i = 0; i < calls; i += 1) await client.op(i);
  client.close();
  if (client.callIds.length !== calls)
    throw new Error(`start-call answered ${JSON.stringify(client.statuses)} (every call should be 201)`);
  const ids = new Set(client.callIds);
  const deadline = Date.now() + 180_000;
  for (;;) {
    const delivered = await receivedCallEnded(receiverUrl, ids);
    if (delivered >= calls) return;
    if (Date.now() > deadline)
      throw new Error(`only ${delivered} of ${calls} post-call webhooks reached the demo receiver`);
    await pause(250);
  }
}

export async function measureCallCost(input: {
  stack: BenchStack;
  workspaceId: string;
  agentId: string;
  apiKey: string;
  toPhone: string;
  calls: number;
  /** Calls made first, not measured: a running stack's cost, not its first calls' (JIT, first imports). */
  warmupCalls: number;
  log: (line: string) => void;
}): Promise<CallCost> {
  const { stack } = input;
  const receiverUrl = stack.state.env.DEMO_WEBHOOK_RECEIVER_URL;
  if (!receiverUrl) throw new Error('the stack runs no demo webhook receiver');
  if (input.warmupCalls > 0) await runCalls(stack, input, input.warmupCalls, receiverUrl);

  // The stack at rest, read the way the measurement below reads it.
  await stack.settle();
  const idleStart = await stack.metrics();
  const idleStarted = Date.now();
  for (let i = 0; i < 12; i += 1) {
    await pause(250);
    await stack.quiescence();
  }
  const idleEnd = await stack.metrics();
  const idleSeconds = (Date.now() - idleStarted) / 1000;
  const idleRate = (idleEnd.cpu_ms - idleStart.cpu_ms) / idleSeconds;
  // DynamoDB Local works on its own too (the JVM's compiler and collector, its own housekeeping).
  const javaIdleRate =
    idleEnd.dynamodb_local_cpu_ms !== undefined && idleStart.dynamodb_local_cpu_ms !== undefined
      ? (idleEnd.dynamodb_local_cpu_ms - idleStart.dynamodb_local_cpu_ms) / idleSeconds
      : 0;

  const before = await stack.metrics();
  const started = Date.now();
  await runCalls(stack, input, input.calls, receiverUrl);
  await stack.settle();
  const after: StackMetrics = await stack.metrics();
  const seconds = (Date.now() - started) / 1000;
  input.log(`${input.calls} calls completed and delivered in ${seconds.toFixed(1)} s`);

  const n = input.calls;
  const dynamodb = diff(after.dynamodb, before.dynamodb, n);
  const queue = diff(after.queue_messages_sent, before.queue_messages_sent, n);
  const byFunction: Record<string, Record<string, number>> = {};
  for (const [fnId, commands] of Object.entries(after.dynamodb_by_function)) {
    const delta = diff(commands, before.dynamodb_by_function[fnId] ?? {}, n);
    if (Object.keys(delta).length > 0) byFunction[fnId] = delta;
  }
  const cpuByProcess: Record<string, number> = {};
  for (const [name, metrics] of Object.entries(after.processes) as [string, ProcessMetrics][])
    cpuByProcess[name] = round((metrics.cpu_ms - (before.processes[name]?.cpu_ms ?? 0)) / n);
  const java =
    after.dynamodb_local_cpu_ms !== undefined && before.dynamodb_local_cpu_ms !== undefined
      ? round((after.dynamodb_local_cpu_ms - before.dynamodb_local_cpu_ms - javaIdleRate * seconds) / n)
      : undefined;
  return {
    calls: n,
    dynamodb,
    dynamodb_reads: sum(dynamodb, (k) => READS.has(k)),
    dynamodb_writes: sum(dynamodb, (k) => WRITES.has(k)),
    dynamodb_items: diff(after.dynamodb_items, before.dynamodb_items, n),
    queue_messages_sent: queue,
    queue_messages: sum(queue),
    cpu_ms: round((after.cpu_ms - before.cpu_ms - idleRate * seconds) / n),
    cpu_ms_by_process: cpuByProcess,
    dynamodb_by_function: byFunction,
    idle_cpu_ms_per_second: round(idleRate),
    ...(java === undefined
      ? {}
      : { dynamodb_local_cpu_ms: java, dynamodb_local_idle_cpu_ms_per_second: round(javaIdleRate) }),
    seconds: round(seconds),
  };
}
