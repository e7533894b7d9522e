import { callShardOf } from '../../../functions/calling/call-shards.js';
import { listCalls } from '../../../functions/calling/call-log.js';
import { CallEntity, type Call } from '../../../functions/calling/entities.js';
import { ListCallsQuery } from '../../../functions/calling/schemas.js';
import { newId } from '../../../functions/platform/ids.js';
import { dynamoClient } from '../../../functions/platform/table.js';

/**
 * The call log's `phone` filter is served by a key (calls by the other party, gsi2), not by filtering
 * the workspace's calls: in a workspace of many calls, the query reads only the calls with that number.
 * The calls are written through the entity, so its watched `remotePhone` (and the index's keys) are what
 * every writer gets.
 */

const workspaceId = newId('workspace');
const PHONE = '+61491570188';

function call(direction: 'inbound' | 'outbound', remote: string, channel?: 'web'): Call {
  const callId = newId('call');
  const now = new Date().toISOString();
  const ours = '+61255500001';
  return {
    workspaceId,
    callId,
    callShard: callShardOf(callId),
    organisationId: newId('organisation'),
    agentId: newId('agent'),
    direction,
    toPhone: direction === 'outbound' ? remote : ours,
    fromPhone: direction === 'inbound' ? remote : ours,
    ...(channel ? { channel } : {}),
    record: false,
    parameters: {},
    status: 'completed',
    statusRank: 5,
    createdBy: 'test',
    createdAt: now,
    agentName: 'Agent',
    greeting: '',
    prompt: '',
    maxDurationSeconds: 60,
    deadlineAt: now,
    openShard: 0,
  };
}

interface Seen {
  command: string;
  input: Record<string, unknown>;
  scanned?: number;
}

/** Every DynamoDB command the work sends, with what it scanned. */
async function recording<T>(work: () => Promise<T>): Promise<{ result: T; seen: Seen[] }> {
  const seen: Seen[] = [];
  const client = dynamoClient();
  const name = `record-${Math.random()}`;
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const output = await next(args);
      seen.push({
        command: String((context as { commandName?: string }).commandName),
        input: args.input as Record<string, unknown>,
        scanned: (output.output as { ScannedCount?: number }).ScannedCount,
      });
      return output;
    },
    { step: 'initialize', name },
  );
  try {
    return { result: await work(), seen };
  } finally {
    client.middlewareStack.remove(name);
  }
}

beforeAll(async () => {
  const others = Array.from({ length: 30 }, (_, i) =>
    call(i % 2 ? 'inbound' : 'outbound', `+614915701${String(i).padStart(2, '0')}`),
  );
  const mine = [call('outbound', PHONE), call('inbound', PHONE), call('inbound', PHONE, 'web')];
  for (const item of [...others, ...mine]) await CallEntity.create(item).go();
});

test('a phone filter reads the calls of that number only, by its key', async () => {
  const { result, seen } = await recording(() =>
    listCalls(workspaceId, ListCallsQuery.parse({ phone: '+61 491 570 188' })),
  );
  // The call out to it and its call in; the test chat from the "same" number has no other party.
  expect(result.items.map((c) => [c.direction, c.remotePhone])).toEqual([
    ['inbound', PHONE],
    ['outbound', PHONE],
  ]);
  const queries = seen.filter((s) => s.command === 'QueryCommand');
  expect(queries).toHaveLength(1);
  expect(seen).toHaveLength(1);
  expect(queries[0].input.IndexName).toBe('gsi2');
  expect(Object.values(queries[0].input.ExpressionAttributeValues as object)).toContain(
    `WS#${workspaceId}#PHONE#${PHONE}#CALLS`,
  );
  // Only those two items were read (a filtered page of the workspace's calls would read all 33).
  expect(queries[0].scanned).toBe(2);
});

test('a web test chat has no other party: it is not in the index', async () => {
  const web = call('inbound', 'web', 'web');
  web.toPhone = 'web';
  const params = CallEntity.create(web).params() as { Item: Record<string, unknown> };
  expect(params.Item.gsi2pk).toBeUndefined();
  expect(params.Item.gsi2sk).toBeUndefined();
  expect(params.Item.gsi1pk).toBeDefined();
  const phone = CallEntity.create(call('inbound', PHONE)).params() as { Item: Record<string, unknown> };
  expect(phone.Item.gsi2pk).toBe(`WS#${workspaceId}#PHONE#${PHONE}#CALLS`);
});
