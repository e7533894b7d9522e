import { readFileSync } from 'node:fs';
import { currentGrants } from '../../functions/platform/grants.js';
import { dynamoClient } from '../../functions/platform/table.js';
import { onQueueClient } from '../../functions/platform/queue.js';
import { onMetric } from '../../functions/platform/metrics.js';
import { onUsage } from '../../functions/platform/usage.js';

/**
 * The local stack's cost counters (GET /_local/metrics): what the handlers of one process asked of
 * DynamoDB and SQS, and the CPU the process used, since it started. Counted where the handlers' own
 * clients send (functions/platform/table.ts dynamoClient(), queue.ts sqsClient()): the stack's own
 * plumbing (creating resources, the pollers' receives and deletes, the quiescence reads) is not the
 * service's work and is not counted, nor is what runs outside a function's invocation (the demo
 * webhook receiver reading a workspace's signing secret, as a customer would). The gateway's process and the background process each keep
 * theirs; the endpoint adds them up. Monotonic: a reader compares two reads (e.g. between two
 * quiescent points, npm run bench's cost of a call).
 */
export interface ProcessMetrics {
  /** User + system CPU of the process (all its threads), milliseconds. */
  cpu_ms: number;
  /** DynamoDB requests by command (GetItem, TransactWriteItems…). */
  dynamodb: Record<string, number>;
  /** Items those requests named: a transaction or batch counts each of its items, others 1. */
  dynamodb_items: Record<string, number>;
  /** Messages sent to SQS (a batch counts each entry), by queue name. */
  queue_messages_sent: Record<string, number>;
  /** DynamoDB requests by catalog function, then command: where they come from. */
  dynamodb_by_function: Record<string, Record<string, number>>;
  /**
   * The service's own metrics (functions/platform/metrics.ts: TurnLatency, ModelFirstToken, …), as
   * the cloud's CloudWatch gets them: how many values, their sum, and the last SAMPLES of them.
   */
  service_metrics: Record<string, ServiceMetric>;
  /**
   * Capacity units DynamoDB reported for those requests (read, write), counted only when the stack
   * runs with LOCAL_METRICS_CAPACITY=on (the requests then ask for ReturnConsumedCapacity TOTAL).
   */
  dynamodb_capacity: { read: number; write: number };
  /**
   * Items written, by partition key value (only with LOCAL_METRICS_CAPACITY=on): which keys a
   * workload writes, and how often (`npm run bench`'s cost part turns them into writes per key a second).
   */
  dynamodb_writes_by_key: Record<string, number>;
  /**
   * The same by partition key and the sort key's first segment (`WS#ws_… POSTCALL`), with
   * LOCAL_METRICS_CAPACITY=on: which kinds of item a hot key takes.
   */
  dynamodb_writes_by_item_kind: Record<string, number>;
  /** Items written in all (a transaction's or batch's each count), with LOCAL_METRICS_CAPACITY=on. */
  dynamodb_items_written: number;
  /**
   * Items written by catalog function, then partition key value (always counted): which keys a path
   * writes (test/e2e/post-call/contact-calls.test.ts: a call's contact update, nothing at `WS#<ws>`).
   */
  dynamodb_writes_by_function_key: Record<string, Record<string, number>>;
  /** What the handlers used of services billed by request, byte or token (functions/platform/usage.ts). */
  usage: Record<string, number>;
  /** Handler invocations by catalog function: how many, and their wall-clock milliseconds. */
  invocations: Record<string, { count: number; ms: number }>;
}

export interface ServiceMetric {
  count: number;
  sum: number;
  samples: number[];
  p50?: number;
  p99?: number;
}

/** Values kept per metric for its percentiles (the newest). */
const SAMPLES = 1000;

export interface StackMetrics extends ProcessMetrics {
  /** Per process of the stack (`gateway`, `background`). */
  processes: Record<string, ProcessMetrics>;
  /** DynamoDB Local's java process, when readable (Linux /proc); not part of `cpu_ms`. */
  dynamodb_local_cpu_ms?: number;
  checked_at: string;
}

const counts = {
  dynamodb: {} as Record<string, number>,
  dynamodbItems: {} as Record<string, number>,
  sent: {} as Record<string, number>,
  byFunction: {} as Record<string, Record<string, number>>,
  service: {} as Record<string, ServiceMetric>,
  capacity: { read: 0, write: 0 },
  writesByKey: {} as Record<string, number>,
  writesByKind: {} as Record<string, number>,
  writesByFunctionKey: {} as Record<string, Record<string, number>>,
  itemsWritten: 0,
  usage: {} as Record<string, number>,
  invocations: {} as Record<string, { count: number; ms: number }>,
};

/** One handler invocation of a catalog function ended (lib/local/invoke.ts). */
export function noteInvocation(fnId: string, ms: number): void {
  const into = (counts.invocations[fnId] ??= { count: 0, ms: 0 });
  into.count += 1;
  into.ms += ms;
}

const WRITE_COMMANDS = new Set([
  'PutItem',
  'UpdateItem',
  'DeleteItem',
  'BatchWriteItem',
  'TransactWriteItems',
]);

type Consumed = { CapacityUnits?: number; ReadCapacityUnits?: number; WriteCapacityUnits?: number };

type Keyed = { pk?: unknown; sk?: unknown } | undefined;

/** The keys a write names (each item of a transaction or batch; a condition check writes nothing). */
function writtenKeys(input: Record<string, unknown>): { pk: string; kind: string }[] {
  const keys: Keyed[] = [];
  if (Array.isArray(input.TransactItems)) {
    for (const t of input.TransactItems as Record<string, { Item?: Keyed; Key?: Keyed } | undefined>[])
      keys.push(t.Put?.Item, t.Update?.Key, t.Delete?.Key);
  } else if (input.RequestItems && typeof input.RequestItems === 'object') {
    for (const requests of Object.values(input.RequestItems as Record<string, unknown[]>))
      for (const r of requests as { PutRequest?: { Item?: Keyed }; DeleteRequest?: { Key?: Keyed } }[])
        keys.push(r.PutRequest?.Item, r.DeleteRequest?.Key);
  } else keys.push((input.Item ?? input.Key) as Keyed);
  return keys.flatMap((k) =>
    typeof k?.pk === 'string'
      ? [{ pk: k.pk, kind: `${k.pk} ${typeof k.sk === 'string' ? k.sk.split('#')[0] : ''}` }]
      : [],
  );
}

function addCapacity(command: string, consumed: Consumed | Consumed[] | undefined): void {
  for (const one of Array.isArray(consumed) ? consumed : consumed ? [consumed] : []) {
    const read = one.ReadCapacityUnits;
    const write = one.WriteCapacityUnits;
    if (read !== undefined || write !== undefined) {
      counts.capacity.read += read ?? 0;
      counts.capacity.write += write ?? 0;
    } else if (WRITE_COMMANDS.has(command)) counts.capacity.write += one.CapacityUnits ?? 0;
    else counts.capacity.read += one.CapacityUnits ?? 0;
  }
}
let installed = false;

const bump = (record: Record<string, number>, key: string, by = 1) => {
  record[key] = (record[key] ?? 0) + by;
};

function itemsOf(input: Record<string, unknown>): number {
  if (Array.isArray(input.TransactItems)) return input.TransactItems.length;
  const requests = input.RequestItems as Record<string, unknown[] | { Keys?: unknown[] }> | undefined;
  if (requests && typeof requests === 'object') {
    let n = 0;
    for (const value of Object.values(requests))
      n += Array.isArray(value) ? value.length : (value.Keys?.length ?? 0);
    return n;
  }
  return 1;
}

/** Counts every DynamoDB request and SQS message the handlers of this process send. Idempotent. */
export function installMetrics(): void {
  if (installed) return;
  installed = true;
  onUsage((kind, amount) => {
    if (currentGrants()) bump(counts.usage, kind, amount);
  });
  const capacity = process.env.LOCAL_METRICS_CAPACITY === 'on';
  onMetric((name, value) => {
    const metric = (counts.service[name] ??= { count: 0, sum: 0, samples: [] });
    metric.count += 1;
    metric.sum += value;
    metric.samples.push(value);
    if (metric.samples.length > SAMPLES) metric.samples.shift();
  });
  dynamoClient().middlewareStack.add(
    (next, context) => async (args) => {
      const fnId = currentGrants()?.fnId;
      if (!fnId) return next(args);
      const command = ((context as { commandName?: string }).commandName ?? 'Unknown').replace(
        /Command$/,
        '',
      );
      bump(counts.dynamodb, command);
      bump((counts.byFunction[fnId] ??= {}), command);
      bump(counts.dynamodbItems, command, itemsOf(args.input as Record<string, unknown>));
      const written = WRITE_COMMANDS.has(command) ? writtenKeys(args.input as Record<string, unknown>) : [];
      for (const { pk } of written) bump((counts.writesByFunctionKey[fnId] ??= {}), pk);
      if (!capacity) return next(args);
      const input = args.input as { ReturnConsumedCapacity?: string };
      input.ReturnConsumedCapacity ??= 'TOTAL';
      for (const { pk, kind } of written) {
        bump(counts.writesByKey, pk);
        bump(counts.writesByKind, kind);
        counts.itemsWritten += 1;
      }
      const result = await next(args);
      addCapacity(command, (result.output as { ConsumedCapacity?: Consumed | Consumed[] }).ConsumedCapacity);
      return result;
    },
    { step: 'initialize', name: 'localMetrics' },
  );
  onQueueClient((client) =>
    client.middlewareStack.add(
      (next, context) => async (args) => {
        const command = (context as { commandName?: string }).commandName ?? '';
        if (!currentGrants()) return next(args);
        const input = args.input as { QueueUrl?: string; Entries?: unknown[] };
        const queue = (input.QueueUrl ?? '?').split('/').pop() ?? '?';
        if (command === 'SendMessageCommand') bump(counts.sent, queue);
        else if (command === 'SendMessageBatchCommand') bump(counts.sent, queue, input.Entries?.length ?? 0);
        return next(args);
      },
      { step: 'initialize', name: 'localMetrics' },
    ),
  );
}

/** This process's counters now. */
export function processMetrics(): ProcessMetrics {
  const { user, system } = process.cpuUsage();
  return {
    cpu_ms: (user + system) / 1000,
    dynamodb: { ...counts.dynamodb },
    dynamodb_items: { ...counts.dynamodbItems },
    queue_messages_sent: { ...counts.sent },
    dynamodb_by_function: Object.fromEntries(
      Object.entries(counts.byFunction).map(([fnId, commands]) => [fnId, { ...commands }]),
    ),
    service_metrics: Object.fromEntries(
      Object.entries(counts.service).map(([name, m]) => [name, { ...m, samples: [...m.samples] }]),
    ),
    dynamodb_capacity: { ...counts.capacity },
    dynamodb_writes_by_key: { ...counts.writesByKey },
    dynamodb_writes_by_item_kind: { ...counts.writesByKind },
    dynamodb_items_written: counts.itemsWritten,
    dynamodb_writes_by_function_key: Object.fromEntries(
      Object.entries(counts.writesByFunctionKey).map(([fnId, keys]) => [fnId, { ...keys }]),
    ),
    usage: { ...counts.usage },
    invocations: Object.fromEntries(Object.entries(counts.invocations).map(([fnId, i]) => [fnId, { ...i }])),
  };
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];

const addInto = (target: Record<string, number>, source: Record<string, number>) => {
  for (const [key, value] of Object.entries(source)) bump(target, key, value);
};

/** A process's counters before it counted anything. */
export const emptyProcessMetrics = (): ProcessMetrics => ({
  cpu_ms: 0,
  dynamodb: {},
  dynamodb_items: {},
  queue_messages_sent: {},
  dynamodb_by_function: {},
  service_metrics: {},
  dynamodb_capacity: { read: 0, write: 0 },
  dynamodb_writes_by_key: {},
  dynamodb_writes_by_item_kind: {},
  dynamodb_items_written: 0,
  dynamodb_writes_by_function_key: {},
  usage: {},
  invocations: {},
});

/** The processes' counters added up. */
export function stackMetrics(
  processes: Record<string, ProcessMetrics>,
  dynamoDbLocalPid?: number,
): StackMetrics {
  const total = emptyProcessMetrics();
  for (const metrics of Object.values(processes)) {
    total.cpu_ms += metrics.cpu_ms;
    total.dynamodb_capacity.read += metrics.dynamodb_capacity?.read ?? 0;
    total.dynamodb_capacity.write += metrics.dynamodb_capacity?.write ?? 0;
    addInto(total.usage, metrics.usage ?? {});
    addInto(total.dynamodb_writes_by_key, metrics.dynamodb_writes_by_key ?? {});
    addInto(total.dynamodb_writes_by_item_kind, metrics.dynamodb_writes_by_item_kind ?? {});
    total.dynamodb_items_written += metrics.dynamodb_items_written ?? 0;
    for (const [fnId, i] of Object.entries(metrics.invocations ?? {})) {
      const into = (total.invocations[fnId] ??= { count: 0, ms: 0 });
      into.count += i.count;
      into.ms += i.ms;
    }
    addInto(total.dynamodb, metrics.dynamodb);
    addInto(total.dynamodb_items, metrics.dynamodb_items);
    addInto(total.queue_messages_sent, metrics.queue_messages_sent);
    for (const [fnId, commands] of Object.entries(metrics.dynamodb_by_function))
      addInto((total.dynamodb_by_function[fnId] ??= {}), commands);
    for (const [fnId, keys] of Object.entries(metrics.dynamodb_writes_by_function_key ?? {}))
      addInto((total.dynamodb_writes_by_function_key[fnId] ??= {}), keys);
    for (const [name, m] of Object.entries(metrics.service_metrics ?? {})) {
      const into = (total.service_metrics[name] ??= { count: 0, sum: 0, samples: [] });
      into.count += m.count;
      into.sum += m.sum;
      into.samples.push(...m.samples);
    }
  }
  for (const metric of Object.values(total.service_metrics)) {
    const sorted = [...metric.samples].sort((a, b) => a - b);
    if (sorted.length > 0)
      Object.assign(metric, { p50: percentile(sorted, 50), p99: percentile(sorted, 99) });
  }
  const java = dynamoDbLocalPid === undefined ? undefined : processCpuMs(dynamoDbLocalPid);
  return {
    ...total,
    processes,
    ...(java === undefined ? {} : { dynamodb_local_cpu_ms: java }),
    checked_at: new Date().toISOString(),
  };
}

/** CPU of another process from /proc (Linux), milliseconds; undefined where there is no /proc. */
export function processCpuMs(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces): utime is the 14th field, stime the 15th.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]);
    return Number.isFinite(ticks) ? ticks * 10 : undefined; // USER_HZ is 100 on Linux
  } catch {
    return undefined;
  }
}
