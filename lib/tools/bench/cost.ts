import { join } from 'node:path';
import type { FunctionSpec } from '../../cloud/catalog-types.js';
import type { StackMetrics } from '../../local/metrics.js';
import { CALL_SHARDS } from '../../../functions/calling/call-shards.js';
import { ApiClient } from '../cli/api-client.js';
import { receiveCall } from '../cli/call.js';
import { seed } from '../cli/seed.js';
import { readSmsOutbox } from '../../../functions/providers/sms/local-outbox.js';
import { startBenchStack, type BenchStack } from './stack-process.js';
import { PRICES_AS_OF, PRICES_SOURCE, REFERENCE_PER_MINUTE, UNIT_PRICES as P, price } from './unit-prices.js';

/**
 * What a call costs in AWS money (`BENCH_PARTS=cost npm run bench`; issue 34 item 4), on a stack of its
 * own at SIMULATOR_TIME_SCALE 60 with LOCAL_METRICS_CAPACITY=on (DynamoDB reports the capacity units
 * of every request the handlers send):
 *
 * - **the call**: an inbound call to the demo agent (telephony simulator `POST /inbound`) whose caller
 *   says 10 lines — one of them about a property, so the agent searches its listings knowledge base
 *   once — then the post-call pipeline: the analysis, the post-call webhook (to the demo receiver)
 *   and an `sms_owner` action; measured over `calls` calls after `warmupCalls` unmeasured ones;
 * - **one SMS campaign message**: a one-contact SMS campaign, PATCH sending → sent and delivered.
 *
 * Counted between two quiescent points (GET /_local/metrics): DynamoDB requests and capacity units,
 * each function's invocations and handler milliseconds (× its memory in the CDK app = GB-seconds),
 * queue messages, S3 requests and bytes, API Gateway messages (WebSocket frames in = the relay's
 * invocations, out = PostToConnection; HTTP API requests = the HTTP functions' invocations), model
 * tokens as the model simulator reports them (a token a word). Priced by unit-prices.ts, per call and
 * per call-minute of a 3-minute call (the simulator plays the talk in fewer simulated seconds; what
 * scales with time — WebSocket connection minutes — is priced at 3 minutes). Not counted: Twilio (voice
 * minutes, ConversationRelay, SMS), CloudWatch logs and metrics, idle queue polling (a fixed cost a
 * month, not a call's), storage over time.
 */

export const CALL_MINUTES = 3;
const CALLER_LINES = [
  'Hi, I was hoping to get some information.',
  'Do you have a house for sale in Manly?',
  'When can I book an inspection?',
  'What time do open days start?',
  'Can I come by during the week?',
  'Who am I speaking with?',
  'Could you say that again please?',
  'Is there parking nearby?',
  'Okay, that is helpful, thank you.',
  // The simulator's caller adds its goodbye: the 10th line.
];
const OWNER_PHONE = '+61491570156';
const CONTACT_PHONE = '+61491570157';

export interface Usage {
  dynamodbRequests: Record<string, number>;
  /** DynamoDB requests by catalog function. */
  dynamodbByFunction: Record<string, number>;
  dynamodbReads: number;
  dynamodbWrites: number;
  readUnits: number;
  writeUnits: number;
  invocations: Record<string, { count: number; ms: number; memoryMb: number; gbSeconds: number }>;
  lambdaInvocations: number;
  gbSeconds: number;
  queueMessages: number;
  sqsRequests: number;
  s3Puts: number;
  s3Gets: number;
  s3BytesPut: number;
  s3BytesGot: number;
  websocketIn: number;
  websocketOut: number;
  httpApiRequests: number;
  inputTokens: number;
  outputTokens: number;
}

export interface PricedUsage {
  usage: Usage;
  /** US dollars by line. */
  dollars: Record<string, number>;
  total: number;
}

/** A partition key every measured call wrote: what it would see at a rate of calls a second. */
export interface HotKey {
  /** The key with its ids masked (`WS#<id>#CALLS`). */
  key: string;
  /** Items written to it per call (a transaction's items each). */
  writesPerCall: number;
  /** Estimated write units a second at each rate (writes × the run's mean write units per item written). */
  wcuPerSecondAt: Record<number, number>;
  /** Its writes a call by kind of item (the sort key's first segment), most written first. */
  items?: Record<string, number>;
}

export const HOT_KEY_RATES = [1, 10, 100] as const;
/** DynamoDB's per-partition write limit (write units a second). */
export const PARTITION_WCU = 1_000;

export interface CostReport {
  calls: number;
  /** Write units per item written, over the measured calls. */
  writeUnitsPerItem: number;
  hotKeys: HotKey[];
  call: PricedUsage;
  sms: PricedUsage;
  perCallMinute: number;
  pricesAsOf: string;
  pricesSource: string;
}

const READS = new Set(['GetItem', 'BatchGetItem', 'Query', 'Scan', 'TransactGetItems']);
const delta = (a: Record<string, number>, b: Record<string, number>, n: number) => {
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(a)) {
    const d = (v - (b[k] ?? 0)) / n;
    if (d !== 0) out[k] = d;
  }
  return out;
};
const sum = (r: Record<string, number>, keep: (k: string) => boolean = () => true) =>
  Object.entries(r).reduce((s, [k, v]) => (keep(k) ? s + v : s), 0);

/** What the stack used between two reads of its counters, per unit of work (`n`). */
export function usageBetween(
  before: StackMetrics,
  after: StackMetrics,
  n: number,
  functions: Map<string, FunctionSpec>,
  defaultMemoryMb: number,
): Usage {
  const dynamodb = delta(after.dynamodb, before.dynamodb, n);
  const used = delta(after.usage, before.usage, n);
  const invocations: Usage['invocations'] = {};
  for (const [fnId, i] of Object.entries(after.invocations)) {
    const was = before.invocations[fnId] ?? { count: 0, ms: 0 };
    const count = (i.count - was.count) / n;
    if (count === 0) continue;
    const ms = (i.ms - was.ms) / n;
    const memoryMb = functions.get(fnId)?.memoryMb ?? defaultMemoryMb;
    // Lambda bills each invocation's duration rounded up to the millisecond.
    invocations[fnId] = { count, ms, memoryMb, gbSeconds: (ms / 1000) * (memoryMb / 1024) };
  }
  const queueMessages = sum(delta(after.queue_messages_sent, before.queue_messages_sent, n));
  const isHttp = (fnId: string) => (functions.get(fnId)?.http?.length ?? 0) > 0;
  const isSocket = (fnId: string) => functions.get(fnId)?.webSocket !== undefined;
  return {
    dynamodbRequests: dynamodb,
    dynamodbByFunction: Object.fromEntries(
      Object.entries(after.dynamodb_by_function)
        .map(([fnId, c]) => [fnId, sum(delta(c, before.dynamodb_by_function[fnId] ?? {}, n))] as const)
        .filter(([, v]) => v !== 0),
    ),
    dynamodbReads: sum(dynamodb, (k) => READS.has(k)),
    dynamodbWrites: sum(dynamodb, (k) => !READS.has(k)),
    readUnits: (after.dynamodb_capacity.read - before.dynamodb_capacity.read) / n,
    writeUnits: (after.dynamodb_capacity.write - before.dynamodb_capacity.write) / n,
    invocations,
    lambdaInvocations: sum(Object.fromEntries(Object.entries(invocations).map(([k, v]) => [k, v.count]))),
    gbSeconds: Object.values(invocations).reduce((s, i) => s + i.gbSeconds, 0),
    queueMessages,
    // Each message sent (a batch's entries: at most 10 a request, counted here as sent) is received
    // and deleted by Lambda's event source mapping: ~3 requests a message.
    sqsRequests: (used['sqs:SendMessage'] ?? 0) + (used['sqs:SendMessageBatch'] ?? 0) + 2 * queueMessages,
    s3Puts: used['s3:PutObject'] ?? 0,
    s3Gets: sum(used, (k) => k.startsWith('s3:') && !k.startsWith('s3:bytes') && k !== 's3:PutObject'),
    s3BytesPut: used['s3:bytes_put'] ?? 0,
    s3BytesGot: used['s3:bytes_get'] ?? 0,
    websocketIn: Object.entries(invocations).reduce((s, [k, v]) => (isSocket(k) ? s + v.count : s), 0),
    websocketOut: used['execute-api:PostToConnection'] ?? 0,
    httpApiRequests: Object.entries(invocations).reduce((s, [k, v]) => (isHttp(k) ? s + v.count : s), 0),
    inputTokens: used['model:input_tokens'] ?? 0,
    outputTokens: used['model:output_tokens'] ?? 0,
  };
}

export function priced(usage: Usage, connectionMinutes: number): PricedUsage {
  const dollars: Record<string, number> = {
    'DynamoDB (request units)':
      price(P.dynamodbReadRequestUnit, usage.readUnits) + price(P.dynamodbWriteRequestUnit, usage.writeUnits),
    'Lambda (invocations + GB-seconds)':
      price(P.lambdaRequest, usage.lambdaInvocations) + price(P.lambdaGbSecondArm, usage.gbSeconds),
    SQS: price(P.sqsRequest, usage.sqsRequests),
    S3: price(P.s3PutRequest, usage.s3Puts) + price(P.s3GetRequest, usage.s3Gets),
    'API Gateway (WebSocket messages + connection minutes, HTTP API)':
      price(P.websocketMessage, usage.websocketIn + usage.websocketOut) +
      price(P.websocketConnectionMinute, connectionMinutes) +
      price(P.httpApiRequest, usage.httpApiRequests),
    'Bedrock (Nova Lite tokens)':
      price(P.novaLiteInputToken, usage.inputTokens) + price(P.novaLiteOutputToken, usage.outputTokens),
  };
  return { usage, dollars, total: sum(dollars) };
}

export async function deliveredCallEnded(receiverUrl: string, callId: string): Promise<boolean> {
  const response = await fetch(receiverUrl);
  const { received } = (await response.json()) as {
    received: { type: string | null; call_id: string | null; verified: boolean }[];
  };
  return received.some((r) => r.verified && r.type === 'call.ended' && r.call_id === callId);
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function until(what: string, check: () => Promise<boolean>, timeoutMs = 180_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await pause(250);
  }
}

export async function measureCost(options: {
  root: string;
  calls: number;
  warmupCalls: number;
  functions: FunctionSpec[];
  defaultMemoryMb: number;
  env: Record<string, string>;
  log: (line: string) => void;
}): Promise<CostReport> {
  const { log } = options;
  const stack: BenchStack = await startBenchStack({
    root: options.root,
    stateDir: join(options.root, '.local', `bench-${process.pid}-cost`),
    logPath: join(options.root, '.local', 'bench-stack-cost.log'),
    env: { ...options.env, SIMULATOR_TIME_SCALE: '60', LOCAL_METRICS_CAPACITY: 'on' },
  });
  try {
    const demo = await seed(stack.state, { plan: 'growth' }, log);
    const receiverUrl = stack.state.env.DEMO_WEBHOOK_RECEIVER_URL;
    if (!receiverUrl) throw new Error('the stack runs no demo webhook receiver');
    const owner = new ApiClient(stack.state.base_url, demo.owner_token);
    const ws = `/api/v1/workspaces/${demo.workspace_id}`;
    const kb = await owner.post<{ id: string }>(`${ws}/knowledge-bases`, {
      name: 'Listings',
      kind: 'listings',
    });
    await owner.post(`${ws}/knowledge-bases/${kb.id}/items`, {
      address: '12 Harbour Street',
      suburb: 'Manly',
      state: 'NSW',
      postcode: '2095',
      price_text: '$1,250,000',
      status: 'available',
      bedrooms: 3,
      bathrooms: 2,
    });
    await until('the knowledge base index', async () => {
      const base = await owner.get<{ item_count: number; status?: string }>(`${ws}/knowledge-bases/${kb.id}`);
      return base.item_count >= 1;
    });
    await owner.patch(`${ws}/agents/${demo.agent_id}`, {
      knowledge_base_ids: [kb.id],
      post_call_actions: [
        { type: 'webhook', enabled: true, config: { url: receiverUrl } },
        { type: 'sms_owner', enabled: true, config: { to: OWNER_PHONE } },
      ],
    });
    await stack.settle();

    const functions = new Map(options.functions.map((fn) => [fn.id, fn]));
    const playCall = async (i: number) => {
      const call = await receiveCall(stack.state, {
        from: `+6149157${String(1000 + i).slice(-4)}`,
        to: demo.phone_number,
        says: CALLER_LINES,
      });
      if (!call.accepted || !call.call_id)
        throw new Error(`the inbound call was refused: ${JSON.stringify(call)}`);
      const callId = call.call_id;
      await until(`call ${callId}'s post-call webhook`, () => deliveredCallEnded(receiverUrl, callId));
      const detail = await owner.get<{ transcript?: { role: string }[]; conversation?: unknown }>(
        `${ws}/calls/${callId}`,
      );
      return detail;
    };
    for (let i = 0; i < options.warmupCalls; i += 1) await playCall(i);
    await stack.settle();
    log(`cost: ${options.calls} calls of ${CALLER_LINES.length + 1} caller lines`);
    const before = await stack.metrics();
    let userLines = 0;
    const snapshots: StackMetrics[] = [before];
    for (let i = 0; i < options.calls; i += 1) {
      const detail = await playCall(options.warmupCalls + i);
      userLines += (detail.transcript ?? []).filter((t) => t.role === 'user').length;
      await stack.settle();
      snapshots.push(await stack.metrics());
    }
    const after = snapshots.at(-1)!;
    log(`cost: ${userLines / options.calls} caller lines a call in the transcripts`);
    const call = priced(
      usageBetween(before, after, options.calls, functions, options.defaultMemoryMb),
      CALL_MINUTES,
    );

    // One SMS campaign message: a campaign to one contact, sending → sent and delivered.
    await owner.post(`${ws}/contacts`, { first_name: 'Ada', phone: CONTACT_PHONE, tags: ['cost-bench'] });
    await stack.settle();
    const smsBefore = await stack.metrics();
    const campaign = await owner.post<{ id: string }>(`${ws}/sms-campaigns`, {
      name: 'Cost bench',
      body: 'Hi {{first_name}}, our open home is on Saturday at 10. Reply STOP to opt out.',
      audience: { tag: 'cost-bench' },
    });
    await owner.patch(`${ws}/sms-campaigns/${campaign.id}`, { status: 'sending' });
    // Waited for without asking the API (its reads would be counted): the simulator's outbox has the
    // message, then the stack is quiet (the delivery callback applied); checked once after the count.
    const outbox = join(stack.state.env.LOCAL_STATE_DIR ?? '', 'outbox', 'sms.jsonl');
    await until('the SMS in the outbox', () =>
      Promise.resolve(readSmsOutbox(outbox).some((line) => line.to === CONTACT_PHONE)),
    );
    await stack.settle();
    const smsAfter = await stack.metrics();
    const state = await owner.get<{ status: string; sent: number; delivered: number }>(
      `${ws}/sms-campaigns/${campaign.id}`,
    );
    if (state.status !== 'sent' || state.sent !== 1 || state.delivered !== 1)
      throw new Error(`the SMS campaign is ${JSON.stringify(state)} (1 sent and delivered expected)`);
    const sms = priced(usageBetween(smsBefore, smsAfter, 1, functions, options.defaultMemoryMb), 0);
    const itemsWritten = after.dynamodb_items_written - before.dynamodb_items_written;
    const writeUnitsPerItem =
      itemsWritten > 0 ? (after.dynamodb_capacity.write - before.dynamodb_capacity.write) / itemsWritten : 0;
    return {
      calls: options.calls,
      writeUnitsPerItem,
      hotKeys: hotKeys(snapshots, writeUnitsPerItem),
      call,
      sms,
      perCallMinute: call.total / CALL_MINUTES,
      pricesAsOf: PRICES_AS_OF,
      pricesSource: PRICES_SOURCE,
    };
  } finally {
    await stack.stop();
  }
}

export const maskIds = (key: string) =>
  key.replace(/[a-z]{2,5}_[0-9A-HJKMNP-TV-Z]{26}/g, '<id>').replace(/\+\d{6,15}/g, '<phone>');

/**
 * A sharded key (a workspace's calls and day counters, functions/calling/call-shards.ts): its shards
 * as one key, each shard taking its share of the calls (the shard is a hash of the call id: even at any rate).
 */
const SHARDED_KEYS: { pattern: RegExp; key: string; shards: number }[] = [
  { pattern: /^(WS#[^#]+#CALLS)#\d+(?= |$)/, key: '$1#<shard>', shards: CALL_SHARDS },
  // The day counters: a call adds to its own shard's (calling/call-stats.ts).
  { pattern: /^(WS#[^#]+#CALLSTATS)#\d+(?= |$)/, key: '$1#<shard>', shards: CALL_SHARDS },
];

/** A call's writes by key, with its writes to a sharded key's shards counted as one shard's share. */
export function foldShards(writes: Record<string, number>): Record<string, number> {
  const folded: Record<string, number> = {};
  for (const [key, n] of Object.entries(writes)) {
    const sharded = SHARDED_KEYS.find((s) => s.pattern.test(key));
    const name = sharded ? key.replace(sharded.pattern, sharded.key) : key;
    folded[name] = (folded[name] ?? 0) + (sharded ? n / sharded.shards : n);
  }
  return folded;
}

/** Items written between two snapshots, by partition key (or by key and kind of item), shards apart. */
export const writesBetween = (after: StackMetrics, before: StackMetrics, by: 'key' | 'kind' = 'key') =>
  by === 'key'
    ? delta(after.dynamodb_writes_by_key, before.dynamodb_writes_by_key, 1)
    : delta(after.dynamodb_writes_by_item_kind ?? {}, before.dynamodb_writes_by_item_kind ?? {}, 1);

/**
 * The keys every call wrote (between each call's snapshot and the one before), most written first.
 * A sharded key's row is one of its shards at the rate: each call writes one shard, so a shard sees
 * its share of the calls' writes.
 */
export function hotKeys(snapshots: StackMetrics[], writeUnitsPerItem: number): HotKey[] {
  const perCall = snapshots
    .slice(1)
    .map((s, i) => foldShards(delta(s.dynamodb_writes_by_key, snapshots[i].dynamodb_writes_by_key, 1)));
  const calls = perCall.length;
  if (calls === 0) return [];
  const kinds = foldShards(
    delta(
      snapshots.at(-1)!.dynamodb_writes_by_item_kind ?? {},
      snapshots[0].dynamodb_writes_by_item_kind ?? {},
      calls,
    ),
  );
  const shared = Object.keys(perCall[0]).filter((key) => perCall.every((c) => (c[key] ?? 0) > 0));
  return shared
    .map((key) => {
      const writesPerCall = perCall.reduce((s, c) => s + (c[key] ?? 0), 0) / calls;
      const items = Object.entries(kinds)
        .filter(([kind]) => kind.split(' ')[0] === key)
        .sort(([, a], [, b]) => b - a)
        .map(([kind, n]) => [kind.split(' ')[1] || '-', n] as const);
      return {
        key: maskIds(key),
        writesPerCall,
        wcuPerSecondAt: Object.fromEntries(
          HOT_KEY_RATES.map((r) => [r, r * writesPerCall * writeUnitsPerItem]),
        ),
        ...(items.length > 0 ? { items: Object.fromEntries(items) } : {}),
      };
    })
    .sort((a, b) => b.writesPerCall - a.writesPerCall);
}

/** The keys every call wrote, at rising rates of calls a second, against the partition's write limit. */
export function hotKeysTable(r: CostReport): string[] {
  const range = (k: HotKey, rate: number) => {
    const low = rate * k.writesPerCall;
    const high = k.wcuPerSecondAt[rate];
    const mark = low > PARTITION_WCU ? ' **over**' : high > PARTITION_WCU ? ' (may be over)' : '';
    return `${f(low, 0)}–${f(high, 0)}${mark}`;
  };
  return [
    `## hot keys: partition keys every call wrote (the run's mean: ${f(r.writeUnitsPerItem, 2)} write units an item written)`,
    `| key | items written a call | ${HOT_KEY_RATES.map((x) => `WCU/s at ${x} calls/s`).join(' | ')} | its items a call |`,
    `|---|---:|${HOT_KEY_RATES.map(() => '---:').join('|')}|---|`,
    ...r.hotKeys.map(
      (k) =>
        `| ${k.key} | ${f(k.writesPerCall)} | ${HOT_KEY_RATES.map((x) => range(k, x)).join(' | ')} | ${Object.entries(
          k.items ?? {},
        )
          .map(([kind, n]) => `${kind} ${f(n)}`)
          .join(', ')} |`,
    ),
    "WCU/s from 1 write unit an item written (the least) to the run's mean (which the large conversation",
    "and call items pull up); DynamoDB Local never throttles: these are each call's measured writes times",
    "the rate, against 1,000 WCU/s a partition. DynamoDB can split a key's items by sort key for heat,",
    'but never one item, nor keys whose new items all sort at the end (ULID ids).',
  ];
}

const usd = (n: number) => `$${n < 0.01 ? n.toFixed(6) : n.toFixed(4)}`;
const f = (n: number, d = 1) => n.toFixed(d);

function usageLines(u: Usage): string[] {
  const commands = Object.entries(u.dynamodbRequests)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([c, n]) => `${c} ${f(n)}`)
    .join(', ');
  const top = Object.entries(u.invocations)
    .sort(([, a], [, b]) => b.gbSeconds - a.gbSeconds)
    .slice(0, 6)
    .map(([fn, i]) => `${fn} ${f(i.count)}× ${f(i.ms / Math.max(1, i.count), 0)} ms @ ${i.memoryMb} MB`)
    .join('; ');
  return [
    `| DynamoDB requests | ${f(u.dynamodbReads + u.dynamodbWrites)}: ${f(u.dynamodbReads)} reads, ${f(u.dynamodbWrites)} writes (${commands}) |`,
    `| DynamoDB by function | ${Object.entries(u.dynamodbByFunction)
      .sort(([, a], [, b]) => b - a)
      .map(([fn, v]) => `${fn} ${f(v)}`)
      .join(', ')} |`,
    `| DynamoDB request units | ${f(u.readUnits)} read, ${f(u.writeUnits)} write |`,
    `| Lambda | ${f(u.lambdaInvocations)} invocations, ${f(u.gbSeconds, 3)} GB-s (${top}) |`,
    `| SQS | ${f(u.queueMessages)} messages, ~${f(u.sqsRequests)} requests (send + receive + delete) |`,
    `| S3 | ${f(u.s3Puts)} PUT (${f(u.s3BytesPut / 1024)} KB), ${f(u.s3Gets)} GET/HEAD (${f(u.s3BytesGot / 1024)} KB) |`,
    `| API Gateway | WebSocket ${f(u.websocketIn)} frames in, ${f(u.websocketOut)} out; HTTP API ${f(u.httpApiRequests)} requests |`,
    `| model tokens | ${f(u.inputTokens, 0)} in, ${f(u.outputTokens, 0)} out |`,
  ];
}

export function costTable(r: CostReport): string[] {
  const dollarLines = (p: PricedUsage) =>
    Object.entries(p.dollars).map(([what, d]) => `| ${what} | ${usd(d)} |`);
  return [
    `## what a call costs (AWS, us-east-1 list prices as of ${r.pricesAsOf}; mean of ${r.calls} calls)`,
    `A ${CALL_MINUTES}-minute inbound call, 10 caller lines, one knowledge search, post-call webhook + SMS action:`,
    '| per call | |',
    '|---|---|',
    ...usageLines(r.call.usage),
    ...dollarLines(r.call),
    `| **total per call** | **${usd(r.call.total)}** |`,
    `| **per call-minute** | **${usd(r.perCallMinute)}** |`,
    ...REFERENCE_PER_MINUTE.map(
      (ref) => `| reference: ${ref.name} | $${ref.usd.toFixed(2)}/min (${ref.what}) |`,
    ),
    '',
    'One SMS campaign message (a one-contact campaign: its creation and start included, sending → delivered):',
    '| per message | |',
    '|---|---|',
    ...usageLines(r.sms.usage),
    ...dollarLines(r.sms),
    `| **total per SMS** | **${usd(r.sms.total)}** (Twilio's SMS price not included) |`,
    `Prices: ${r.pricesSource}; Twilio (voice, ConversationRelay, SMS), CloudWatch and idle queue polling not counted.`,
  ];
}
