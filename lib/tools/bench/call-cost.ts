import type { ProcessMetrics, StackMetrics } from '../../local/metrics.js';
import { scheduledFunctions } from '../../cloud/catalog.js';
import { ApiClient } from '../cli/api-client.js';
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
  /** The same call with the agent's PII redaction on, against off (measureRedactionCallCost). */
  redaction?: RedactionCallCost;
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

/** Issue 42's budget: a call with PII redaction on asks DynamoDB at most this many more requests. */
export const REDACTION_CALL_COST_BUDGET = { extraDynamodbRequests: 2 } as const;

/** One way's calls, each counted on its own between two quiescent points. */
export interface CountedCalls {
  /** DynamoDB requests of each call, in the functions a call reaches (the schedules' own work aside). */
  median: number;
  min: number;
  max: number;
  mean: number;
}

export interface RedactionCallCost {
  calls: number;
  off: CountedCalls;
  on: CountedCalls;
  /** The medians' difference: a call's extra requests, a write retried now and then aside. */
  extra: number;
  /** Where they are: function → command → the means' difference per call. */
  extraByFunction: Record<string, Record<string, number>>;
  withinBudget: boolean;
}

const SCHEDULED = new Set(scheduledFunctions().map((f) => f.id));

/** `calls` calls, one at a time, each between two quiescent points: requests per call, and by function in all. */
async function countEachCall(
  stack: BenchStack,
  input: { workspaceId: string; agentId: string; apiKey: string; toPhone: string },
  calls: number,
  receiverUrl: string,
): Promise<{ counted: CountedCalls; byFunction: Record<string, Record<string, number>> }> {
  await runCalls(stack, input, 1, receiverUrl); // the first call after a change is not counted
  const totals: number[] = [];
  const byFunction: Record<string, Record<string, number>> = {};
  for (let i = 0; i < calls; i += 1) {
    await stack.settle();
    const before = await stack.metrics();
    await runCalls(stack, input, 1, receiverUrl);
    await stack.settle();
    const after = await stack.metrics();
    let total = 0;
    for (const [fnId, commands] of Object.entries(after.dynamodb_by_function)) {
      if (SCHEDULED.has(fnId)) continue;
      for (const [command, n] of Object.entries(diff(commands, before.dynamodb_by_function[fnId] ?? {}, 1))) {
        total += n;
        const fn = (byFunction[fnId] ??= {});
        fn[command] = (fn[command] ?? 0) + n / calls;
      }
    }
    totals.push(total);
  }
  totals.sort((a, b) => a - b);
  const counted = {
    median: totals[Math.floor(totals.length / 2)]!,
    min: totals[0]!,
    max: totals[totals.length - 1]!,
    mean: round(totals.reduce((s, n) => s + n, 0) / totals.length),
  };
  return { counted, byFunction };
}

/**
 * The same call with and without the agent's PII redaction: the demo agent's call to `toPhone`, a
 * contact of the workspace (redaction reads a contact's known values: the worst case), `calls` calls
 * each way, each counted between two quiescent points from the stack's counters (GET /_local/metrics),
 * redaction off, then on, then off again as the agent was. The medians compare a call with a call: a
 * write met by a concurrent one and tried again (now and then, either way) moves the means, not them.
 */
export async function measureRedactionCallCost(input: {
  stack: BenchStack;
  workspaceId: string;
  agentId: string;
  apiKey: string;
  ownerToken: string;
  toPhone: string;
  calls: number;
  log: (line: string) => void;
}): Promise<RedactionCallCost> {
  const receiverUrl = input.stack.state.env.DEMO_WEBHOOK_RECEIVER_URL;
  if (!receiverUrl) throw new Error('the stack runs no demo webhook receiver');
  const owner = new ApiClient(input.stack.state.base_url, input.ownerToken);
  const workspace = `/api/v1/workspaces/${input.workspaceId}`;
  await owner.post(`${workspace}/contacts`, {
    first_name: 'Sam',
    last_name: 'Taylor',
    phone: input.toPhone,
    email: 'sam.taylor@bench.example.com',
  });
  const agent = `${workspace}/agents/${input.agentId}`;
  input.log(`PII redaction: ${input.calls} calls without it, then ${input.calls} with it, one at a time`);
  const off = await countEachCall(input.stack, input, input.calls, receiverUrl);
  await owner.patch(agent, { pii_redaction: { enabled: true } });
  try {
    const on = await countEachCall(input.stack, input, input.calls, receiverUrl);
    const extraByFunction: Record<string, Record<string, number>> = {};
    for (const fnId of new Set([...Object.keys(on.byFunction), ...Object.keys(off.byFunction)])) {
      for (const command of new Set([
        ...Object.keys(on.byFunction[fnId] ?? {}),
        ...Object.keys(off.byFunction[fnId] ?? {}),
      ])) {
        const delta = round((on.byFunction[fnId]?.[command] ?? 0) - (off.byFunction[fnId]?.[command] ?? 0));
        if (delta !== 0) (extraByFunction[fnId] ??= {})[command] = delta;
      }
    }
    const extra = on.counted.median - off.counted.median;
    return {
      calls: input.calls,
      off: off.counted,
      on: on.counted,
      extra,
      extraByFunction,
      withinBudget: extra <= REDACTION_CALL_COST_BUDGET.extraDynamodbRequests,
    };
  } finally {
    await owner.patch(agent, { pii_redaction: { enabled: false } });
  }
}

/** The redaction row of the cost-of-a-call table. */
export function redactionCallCostRow(r: RedactionCallCost): string {
  const where = Object.entries(r.extraByFunction)
    .flatMap(([fnId, commands]) =>
      Object.entries(commands).map(([command, n]) => `${fnId} ${command} ${n > 0 ? '+' : ''}${n}`),
    )
    .join(', ');
  const way = (c: CountedCalls) => `${c.median} (${c.min}–${c.max}, mean ${c.mean})`;
  return (
    `| PII redaction on: the same call (with a contact), ${r.calls} each way, each counted alone | ` +
    `median ${way(r.on)} DynamoDB requests vs ${way(r.off)} off: **${r.extra >= 0 ? '+' : ''}${r.extra}**; ` +
    `means' difference by command: ${where || 'none'}; budget ≤ +${REDACTION_CALL_COST_BUDGET.extraDynamodbRequests}: ` +
    `${r.withinBudget ? 'within ✓' : 'over ✗'} |`
  );
}

const fixed = (n: number, digits = 1) => n.toFixed(digits);

/** The cost of a call as the bench prints it (markdown rows). */
export function callCostTable(c: CallCost): string[] {
  const commands = Object.entries(c.dynamodb)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([command, n]) => `${command} ${n}`)
    .join(', ');
  const queues = Object.entries(c.queue_messages_sent)
    .map(([queue, n]) => `${queue} ${n}`)
    .join(', ');
  const processes = Object.entries(c.cpu_ms_by_process)
    .map(([name, ms]) => `${name} ${fixed(ms)}`)
    .join(', ');
  const requests = c.dynamodb_reads + c.dynamodb_writes;
  const byFunction = Object.entries(c.dynamodb_by_function)
    .map(([fn, counts]) => [fn, Object.values(counts).reduce((sum, n) => sum + n, 0)] as const)
    .sort(([, a], [, b]) => b - a)
    .map(([fn, n]) => `${fn} ${fixed(n)}`)
    .join(', ');
  return [
    '| per completed call | |',
    '|---|---|',
    `| DynamoDB requests | ${fixed(requests)}: ${fixed(c.dynamodb_reads)} reads, ${fixed(c.dynamodb_writes)} writes (${commands}) |`,
    `| budget | ≤ ${CALL_COST_BUDGET.dynamodbRequests} DynamoDB requests: ${requests <= CALL_COST_BUDGET.dynamodbRequests ? 'within ✓' : 'over ✗'} |`,
    `| DynamoDB requests by function | ${byFunction} |`,
    `| queue messages sent | ${fixed(c.queue_messages)} (${queues}) |`,
    `| CPU of the stack's Node processes | ${fixed(c.cpu_ms)} ms (${processes} ms, before taking off ${fixed(c.idle_cpu_ms_per_second)} ms/s of idle work) |`,
    ...(c.redaction ? [redactionCallCostRow(c.redaction)] : []),
    ...(c.dynamodb_local_cpu_ms !== undefined
      ? [
          `| CPU of DynamoDB Local (java) | ${fixed(c.dynamodb_local_cpu_ms)} ms (after taking off ${fixed(c.dynamodb_local_idle_cpu_ms_per_second ?? 0)} ms/s of its own idle work) |`,
        ]
      : []),
  ];
}
