import { join } from 'node:path';
import type { StackMetrics } from '../../local/metrics.js';
import { listCalls } from '../../../functions/calling/call-log.js';
import { CallEntity, type Call } from '../../../functions/calling/entities.js';
import { CALL_SHARDS, callShardOf, callsShardKey } from '../../../functions/calling/call-shards.js';
import { ListCallsQuery } from '../../../functions/calling/schemas.js';
import { newId } from '../../../functions/platform/ids.js';
import { batchPutItems, queryStoredItems, resetTableClients } from '../../../functions/platform/table.js';
import { ApiClient } from '../cli/api-client.js';
import { seed } from '../cli/seed.js';
import { deliveredCallEnded, foldShards, maskIds, PARTITION_WCU, until, writesBetween } from './cost.js';
import { startBenchStack, type BenchStack } from './stack-process.js';

/**
 * A busy workspace's partition keys (`BENCH_PARTS=hotkeys npm run bench`; issue 44): outbound calls
 * through start-call (the concurrency slot taken and given back), each answered and played out by
 * the simulator, then its post-call pipeline — a webhook, an SMS to the owner and the contact's update
 * — on a stack of its own with LOCAL_METRICS_CAPACITY=on. Between quiescent points after each call,
 * the items written to every partition key (GET /_local/metrics, `dynamodb_writes_by_key` and by kind
 * of item); the keys every call wrote are the ones a workspace's calls share.
 *
 * Write units: each kind of item a key took is read back from the table at the end (its largest
 * item of that kind, as JSON: a little over DynamoDB's own size), and every write of it is counted at
 * ceil(size / 1 KB) × 2, as if each were transactional (the most it can cost). DynamoDB Local never
 * throttles, so the bench computes what a key would see at 100 calls a second in one workspace
 * (writes a call × 100 × their units); a sharded key's row is one shard at its share.
 */

export const HOTKEY_RATE = 100;
const CALLEE = '+61491570156';
const OWNER_PHONE = '+61491570158';

export interface HotKeyRow {
  /** Ids masked; a sharded key as one shard. */
  key: string;
  writesPerCall: number;
  /** Its items a call by kind (the sort key's first segment), and the largest item of each, bytes. */
  items: { kind: string; writes: number; bytes: number }[];
  /** Write units a call at the items' sizes, every write counted as transactional. */
  wcuPerCall: number;
  wcuPerSecond: number;
}

export interface HotKeysReport {
  calls: number;
  rows: HotKeyRow[];
  /** The call log's first page (20 calls), the shards merged vs one Query of one key: p50 ms. */
  callLog: {
    calls: number;
    samples: number;
    mergedP50: number;
    floorP50: number;
    ratio: number;
    /** The shards' queries alone, made directly in parallel (what any merge of them costs at least): p50 ms. */
    fanOutP50: number;
  };
}

const LOG_CALLS = 400;
const LOG_SAMPLES = 41;

const p50 = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

/**
 * The call log's first page as the API reads it (listCalls: one Query a shard, merged) against its
 * floor, the same calls under one partition key read with one Query (and parsed), as before the
 * shards: p50 of LOG_SAMPLES, alternated, in this process on the bench's stack. Beside them, the
 * shards' own queries made directly, all at once, as the merge's first round asks them (the least any
 * page merged from the shards costs on this DynamoDB).
 */
async function callLogPage(): Promise<HotKeysReport['callLog']> {
  const workspaceId = newId('workspace');
  const floorKey = `WS#${newId('workspace')}#CALLS`;
  const started = Date.now() - LOG_CALLS * 1000;
  const items = Array.from({ length: LOG_CALLS }, (_, i) => {
    const callId = newId('call');
    const at = new Date(started + i * 1000).toISOString();
    const call = {
      workspaceId,
      callId,
      callShard: callShardOf(callId),
      organisationId: newId('organisation'),
      agentId: newId('agent'),
      direction: 'outbound',
      toPhone: '+61491570156',
      fromPhone: '+61255500001',
      record: false,
      parameters: {},
      status: 'completed',
      statusRank: 5,
      createdBy: 'usr_bench',
      createdAt: at,
      agentName: 'Agent',
      greeting: 'Hi',
      prompt: 'Be brief.',
      maxDurationSeconds: 60,
      deadlineAt: at,
      openShard: 0,
      updatedAt: at,
    } as Call;
    return (CallEntity.create(call).params() as { Item: Record<string, unknown> }).Item;
  });
  const copies = items.map(({ gsi1pk: _a, gsi1sk: _b, gsi2pk: _c, gsi2sk: _d, ...item }) => ({
    ...item,
    pk: floorKey,
  }));
  const all = [...items, ...copies];
  for (let i = 0; i < all.length; i += 25) await batchPutItems(all.slice(i, i + 25));
  const merged: number[] = [];
  const floor: number[] = [];
  const fanOut: number[] = [];
  const perShard = Math.ceil(20 / CALL_SHARDS) * 2 + 2;
  const query = ListCallsQuery.parse({ limit: 20 });
  for (let i = 0; i < LOG_SAMPLES; i += 1) {
    let t = performance.now();
    const page = await listCalls(workspaceId, query);
    merged.push(performance.now() - t);
    if (page.items.length !== 20) throw new Error(`the call log's page has ${page.items.length} calls`);
    t = performance.now();
    const one = await queryStoredItems({
      KeyConditionExpression: '#pk = :pk',
      ExpressionAttributeNames: { '#pk': 'pk' },
      ExpressionAttributeValues: { ':pk': floorKey },
      ScanIndexForward: false,
      Limit: 21,
    });
    one.items.forEach((item) => CallEntity.parse({ Item: item }));
    floor.push(performance.now() - t);
    t = performance.now();
    const shards = await Promise.all(
      Array.from({ length: CALL_SHARDS }, (_, n) =>
        queryStoredItems({
          KeyConditionExpression: '#pk = :pk',
          ExpressionAttributeNames: { '#pk': 'pk' },
          ExpressionAttributeValues: { ':pk': callsShardKey(workspaceId, n) },
          ScanIndexForward: false,
          Limit: perShard,
        }),
      ),
    );
    shards.forEach((shard) => shard.items.forEach((item) => CallEntity.parse({ Item: item })));
    fanOut.push(performance.now() - t);
  }
  const mergedP50 = p50(merged);
  const floorP50 = p50(floor);
  return {
    calls: LOG_CALLS,
    samples: LOG_SAMPLES,
    mergedP50,
    floorP50,
    ratio: mergedP50 / floorP50,
    fanOutP50: p50(fanOut),
  };
}

const pageSize = 1024;
const unitsOf = (bytes: number) => Math.max(1, Math.ceil(bytes / pageSize)) * 2;

/** The largest stored item of each kind under a partition key (the sort key's first segment). */
async function largestByKind(pk: string): Promise<Map<string, number>> {
  const sizes = new Map<string, number>();
  let next: Record<string, unknown> | undefined;
  do {
    const page = await queryStoredItems({
      KeyConditionExpression: '#pk = :pk',
      ExpressionAttributeNames: { '#pk': 'pk' },
      ExpressionAttributeValues: { ':pk': pk },
      ...(next ? { ExclusiveStartKey: next } : {}),
    });
    for (const item of page.items) {
      const kind = String(item.sk).split('#')[0];
      const bytes = Buffer.byteLength(JSON.stringify(item));
      sizes.set(kind, Math.max(sizes.get(kind) ?? 0, bytes));
    }
    next = page.next;
  } while (next);
  return sizes;
}

export async function measureHotKeys(options: {
  root: string;
  calls: number;
  warmupCalls: number;
  env: Record<string, string>;
  log: (line: string) => void;
}): Promise<HotKeysReport> {
  const { log } = options;
  const stack: BenchStack = await startBenchStack({
    root: options.root,
    stateDir: join(options.root, '.local', `bench-${process.pid}-hotkeys`),
    logPath: join(options.root, '.local', 'bench-stack-hotkeys.log'),
    env: { ...options.env, SIMULATOR_TIME_SCALE: '60', LOCAL_METRICS_CAPACITY: 'on' },
  });
  const environment = { ...process.env };
  try {
    const demo = await seed(stack.state, { plan: 'growth' }, log);
    const receiverUrl = stack.state.env.DEMO_WEBHOOK_RECEIVER_URL;
    if (!receiverUrl) throw new Error('the stack runs no demo webhook receiver');
    const owner = new ApiClient(stack.state.base_url, demo.owner_token);
    const ws = `/api/v1/workspaces/${demo.workspace_id}`;
    await owner.patch(ws, { concurrent_call_limit: 1000 });
    await owner.patch(`${ws}/agents/${demo.agent_id}`, {
      post_call_actions: [
        { type: 'webhook', enabled: true, config: { url: receiverUrl } },
        { type: 'sms_owner', enabled: true, config: { to: OWNER_PHONE } },
        { type: 'contact_update', enabled: true, config: {} },
      ],
    });
    await stack.settle();
    const playCall = async () => {
      const call = await owner.post<{ id: string }>(`${ws}/agents/${demo.agent_id}/start-call`, {
        to_phone: CALLEE,
      });
      // A receiver busy for a moment (2 shared cores) is asked again.
      await until(`call ${call.id}'s post-call webhook`, () =>
        deliveredCallEnded(receiverUrl, call.id).catch(() => false),
      );
    };
    for (let i = 0; i < options.warmupCalls; i += 1) await playCall();
    await stack.settle();
    log(`hotkeys: ${options.calls} outbound calls through start-call`);
    const snapshots: StackMetrics[] = [await stack.metrics()];
    for (let i = 0; i < options.calls; i += 1) {
      await playCall();
      await stack.settle();
      snapshots.push(await stack.metrics());
    }

    // The keys every call wrote, unmasked (one shard of a sharded key stands for it), by kind of item.
    const raw = snapshots.slice(1).map((s, i) => writesBetween(s, snapshots[i]));
    const perCall = raw.map(foldShards);
    const shared = Object.keys(perCall[0]).filter((key) => perCall.every((c) => (c[key] ?? 0) > 0));
    const written = [...new Set(raw.flatMap((writes) => Object.keys(writes)))];
    const kinds = foldShards(writesBetween(snapshots.at(-1)!, snapshots[0], 'kind'));
    Object.assign(process.env, stack.state.env);
    resetTableClients();
    const rows: HotKeyRow[] = [];
    for (const folded of shared) {
      // A sharded key's items are read in every shard the calls wrote.
      const sizes = new Map<string, number>();
      for (const key of written.filter((k) => Object.keys(foldShards({ [k]: 1 }))[0] === folded))
        for (const [kind, bytes] of await largestByKind(key))
          sizes.set(kind, Math.max(sizes.get(kind) ?? 0, bytes));
      const items = Object.entries(kinds)
        .filter(([kind]) => kind.split(' ')[0] === folded)
        .map(([kind, n]) => {
          const name = kind.split(' ')[1] ?? '';
          return { kind: name, writes: n / options.calls, bytes: sizes.get(name) ?? 0 };
        })
        .sort((a, b) => b.writes - a.writes);
      const writesPerCall = items.reduce((sum, i) => sum + i.writes, 0);
      const wcuPerCall = items.reduce((sum, i) => sum + i.writes * unitsOf(i.bytes), 0);
      rows.push({
        key: maskIds(folded),
        writesPerCall,
        items,
        wcuPerCall,
        wcuPerSecond: wcuPerCall * HOTKEY_RATE,
      });
    }
    rows.sort((a, b) => b.wcuPerSecond - a.wcuPerSecond);
    log(`hotkeys: the call log's first page, ${LOG_CALLS} calls, merged vs one key`);
    return { calls: options.calls, rows, callLog: await callLogPage() };
  } finally {
    for (const key of Object.keys(process.env)) if (!(key in environment)) delete process.env[key];
    Object.assign(process.env, environment);
    resetTableClients();
    await stack.stop();
  }
}

const f = (n: number, d = 1) => n.toFixed(d);

export function hotKeysReportTable(r: HotKeysReport): string[] {
  return [
    `## hot keys of one busy workspace: the partition keys every one of ${r.calls} outbound calls wrote, at ${HOTKEY_RATE} calls a second`,
    `| key | items written a call | its items a call (largest item) | WCU a call | WCU/s at ${HOTKEY_RATE} calls/s | of ${PARTITION_WCU} |`,
    '|---|---:|---|---:|---:|---|',
    ...r.rows.map(
      (k) =>
        `| ${k.key} | ${f(k.writesPerCall)} | ${k.items
          .map((i) => `${maskIds(i.kind) || '-'} ${f(i.writes)} (${f(i.bytes / 1024)} KB)`)
          .join(', ')} | ${f(k.wcuPerCall)} | ${f(k.wcuPerSecond, 0)} | ${
          k.wcuPerSecond > PARTITION_WCU ? '**over**' : 'within'
        } |`,
    ),
    'Every write counted at ceil(item size / 1 KB) × 2, as a transactional write (the most it costs),',
    "at its kind's largest item; DynamoDB Local never throttles: these are each call's measured writes",
    'times the rate. A sharded key is one of its shards (its share of the calls).',
    '',
    `The call log's first page (20 of ${r.callLog.calls} calls; p50 of ${r.callLog.samples}, in the bench's process): the shards merged ${f(r.callLog.mergedP50)} ms vs one Query of one key ${f(r.callLog.floorP50)} ms: **${f(r.callLog.ratio, 2)}x** (budget ≤ 1.5x). The ${CALL_SHARDS} shards' queries alone, made directly at once: ${f(r.callLog.fanOutP50)} ms, ${f(r.callLog.fanOutP50 / r.callLog.floorP50, 2)}x one key's (the least any merge of them costs on this DynamoDB); the merge ${f(r.callLog.mergedP50 / r.callLog.fanOutP50, 2)}x that`,
  ];
}
