import { CALL_SHARDS } from '../../functions/calling/call-shards.js';
import type { FunctionSpec } from '../../lib/cloud/catalog-types.js';
import { emptyProcessMetrics, type StackMetrics } from '../../lib/local/metrics.js';
import { hotKeys, priced, usageBetween } from '../../lib/tools/bench/cost.js';
import { UNIT_PRICES } from '../../lib/tools/bench/unit-prices.js';

/** `npm run bench`'s cost part: what it makes of the stack's counters (lib/tools/bench/cost.ts). */

const metrics = (over: Partial<StackMetrics> = {}): StackMetrics => ({
  ...emptyProcessMetrics(),
  processes: {},
  checked_at: '2026-11-27T00:00:00.000Z',
  ...over,
});

const fn = (id: string, extra: Partial<FunctionSpec> = {}): FunctionSpec =>
  ({ id, entry: `functions/${id}.ts`, group: 'calling', access: {}, ...extra }) as FunctionSpec;

const functions = new Map([
  ['Api', fn('Api', { http: [{} as never] })],
  ['Relay', fn('Relay', { webSocket: { routes: ['$default'] }, memoryMb: 1024 })],
  ['Worker', fn('Worker')],
]);

test('usage per call: the difference of two reads divided by the calls, GB-seconds from each function’s memory (default when unset)', () => {
  const before = metrics({
    dynamodb: { GetItem: 10 },
    invocations: { Relay: { count: 1, ms: 100 } },
    usage: { 'model:input_tokens': 50 },
  });
  const after = metrics({
    dynamodb: { GetItem: 30, TransactWriteItems: 4 },
    dynamodb_by_function: { Relay: { GetItem: 20 }, Worker: { TransactWriteItems: 4 } },
    dynamodb_capacity: { read: 20, write: 16 },
    queue_messages_sent: { calls: 2 },
    invocations: {
      Api: { count: 2, ms: 200 },
      Relay: { count: 9, ms: 2_100 },
      Worker: { count: 2, ms: 4_000 },
    },
    usage: {
      'model:input_tokens': 450,
      'model:output_tokens': 40,
      'execute-api:PostToConnection': 12,
      'sqs:SendMessage': 2,
      's3:PutObject': 2,
      's3:GetObject': 4,
      's3:bytes_put': 2048,
    },
  });
  const u = usageBetween(before, after, 2, functions, 512);
  expect(u.dynamodbReads).toBe(10);
  expect(u.dynamodbWrites).toBe(2);
  expect(u.dynamodbByFunction).toEqual({ Relay: 10, Worker: 2 });
  expect([u.readUnits, u.writeUnits]).toEqual([10, 8]);
  // Relay: 4 invocations a call, 1,000 ms at 1 GB; Worker: 1, 2,000 ms at 512 MB (the default).
  expect(u.invocations.Relay).toEqual({ count: 4, ms: 1_000, memoryMb: 1024, gbSeconds: 1 });
  expect(u.invocations.Worker).toEqual({ count: 1, ms: 2_000, memoryMb: 512, gbSeconds: 1 });
  expect(u.gbSeconds).toBeCloseTo(2 + 0.05, 6);
  expect(u.lambdaInvocations).toBe(6);
  expect([u.httpApiRequests, u.websocketIn, u.websocketOut]).toEqual([1, 4, 6]);
  expect([u.queueMessages, u.sqsRequests]).toEqual([1, 3]);
  expect([u.s3Puts, u.s3Gets, u.s3BytesPut]).toEqual([1, 2, 1024]);
  expect([u.inputTokens, u.outputTokens]).toEqual([200, 20]);
});

test('the price is each unit times its list price, and a connection minute is priced as given', () => {
  const u = usageBetween(
    metrics(),
    metrics({ dynamodb_capacity: { read: 1e6, write: 1e6 } }),
    1,
    functions,
    512,
  );
  const p = priced(u, 3);
  expect(p.dollars['DynamoDB (request units)']).toBeCloseTo(
    UNIT_PRICES.dynamodbReadRequestUnit.usd + UNIT_PRICES.dynamodbWriteRequestUnit.usd,
    9,
  );
  expect(p.dollars['API Gateway (WebSocket messages + connection minutes, HTTP API)']).toBeCloseTo(
    (3 * UNIT_PRICES.websocketConnectionMinute.usd) / UNIT_PRICES.websocketConnectionMinute.per,
    12,
  );
  expect(p.total).toBeCloseTo(
    Object.values(p.dollars).reduce((a, b) => a + b, 0),
    12,
  );
});

test('hot keys: only keys every call wrote, ids masked, rates from the writes a call and the write units an item', () => {
  const workspace = 'WS#ws_01M8FASQGDBKYC2PK26Y3EDN35';
  const snapshots = [
    metrics(),
    metrics({ dynamodb_writes_by_key: { [workspace]: 4, 'CALL#ca_01M8FASQKA8ZB59SHWGQ72F1D1': 6 } }),
    metrics({
      dynamodb_writes_by_key: {
        [workspace]: 10,
        'CALL#ca_01M8FASQKA8ZB59SHWGQ72F1D1': 6,
        'CALL#ca_01M8FASQKA8ZB59SHWGQ72F1D2': 6,
      },
    }),
  ];
  const keys = hotKeys(snapshots, 2);
  expect(keys).toEqual([
    { key: 'WS#<id>', writesPerCall: 5, wcuPerSecondAt: { 1: 10, 10: 100, 100: 1_000 } },
  ]);
});

test('hot keys: a sharded key is one shard at its share of the calls, whichever shard each call wrote', () => {
  const calls = (n: number) => `WS#ws_01M8FASQGDBKYC2PK26Y3EDN35#CALLS#${n}`;
  const snapshots = [
    metrics(),
    metrics({ dynamodb_writes_by_key: { [calls(3)]: 8 } }),
    metrics({ dynamodb_writes_by_key: { [calls(3)]: 8, [calls(5)]: 8 } }),
  ];
  const [key] = hotKeys(snapshots, 1);
  expect(key.key).toBe('WS#<id>#CALLS#<shard>');
  expect(key.writesPerCall).toBe(8 / CALL_SHARDS);
});
