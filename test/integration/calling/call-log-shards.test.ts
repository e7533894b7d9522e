import { decodeTime } from 'ulid';
import { DeleteCommand, GetCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { CALL_LOG_UNAVAILABLE, forgetMigrationMark } from '../../../functions/calling/call-log-merge.js';
import { listCalls } from '../../../functions/calling/call-log.js';
import { migrateCalls } from '../../../functions/table-migration.js';
import {
  CALL_SHARDS,
  CALLS_MIGRATED_KEY,
  callShardOf,
  callsShardKey,
  legacyCallsKey,
} from '../../../functions/calling/call-shards.js';
import { CallEntity, type Call } from '../../../functions/calling/entities.js';
import { readCall } from '../../../functions/calling/lifecycle.js';
import { ListCallsQuery } from '../../../functions/calling/schemas.js';
import { newId } from '../../../functions/platform/ids.js';
import { docClient, dynamoClient, tableName } from '../../../functions/platform/table.js';

/**
 * A workspace's calls over CALL_SHARDS keys and, before `migrate calls`, the one key they were
 * written under: the call log is the same list (order, filters, pages) as the one key gave, an old
 * cursor keeps its place, a shard that fails fails the page, and the migration moves each call once.
 */

const workspaceId = newId('workspace');
const LEGACY = 15;
const SHARDED = 60;

function call(i: number): Call {
  const callId = newId('call');
  const at = new Date(Date.now() - (LEGACY + SHARDED - i) * 1000).toISOString();
  return {
    workspaceId,
    callId,
    callShard: callShardOf(callId),
    organisationId: newId('organisation'),
    agentId: newId('agent'),
    direction: i % 3 === 0 ? 'inbound' : 'outbound',
    toPhone: '+61255500001',
    fromPhone: `+614915701${String(i % 100).padStart(2, '0')}`,
    record: false,
    parameters: {},
    status: 'completed',
    statusRank: 5,
    createdBy: 'usr_test',
    createdAt: at,
    agentName: 'Agent',
    greeting: 'Hi',
    prompt: 'Be brief.',
    maxDurationSeconds: 60,
    deadlineAt: at,
    openShard: 0,
    updatedAt: at,
  } as Call;
}

/** The item as the one key held it before the calls were sharded. */
function legacyItem(c: Call): Record<string, unknown> {
  const { Item } = CallEntity.create(c).params() as { Item: Record<string, unknown> };
  const { callShard: _shard, ...item } = Item;
  return { ...item, pk: legacyCallsKey(workspaceId), sk: `CALL#${c.callId}` };
}

const all: Call[] = [];
const newestFirst = () => all.map((c) => c.callId).sort((a, b) => (a < b ? 1 : -1));

async function walk(query: Record<string, unknown>): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | undefined;
  for (let pages = 0; pages < 100; pages += 1) {
    const page = await listCalls(
      workspaceId,
      ListCallsQuery.parse({ ...query, ...(cursor ? { cursor } : {}) }),
    );
    ids.push(...page.items.map((c) => c.callId));
    if (!page.nextCursor) return ids;
    cursor = page.nextCursor;
  }
  throw new Error('the listing did not end');
}

/** The table requests `work` makes, and optionally a fault injected in some. */
async function recording<T>(work: () => Promise<T>, fail?: (input: Record<string, unknown>) => boolean) {
  const client = dynamoClient();
  const name = `record-${Math.random()}`;
  const seen: { command: string; input: Record<string, unknown> }[] = [];
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as Record<string, unknown>;
      const command = String((context as { commandName?: string }).commandName);
      seen.push({ command, input });
      if (fail?.(input)) throw Object.assign(new Error('injected'), { name: 'InternalServerError' });
      return next(args);
    },
    { step: 'initialize', name },
  );
  try {
    return { result: await work(), seen };
  } finally {
    client.middlewareStack.remove(name);
  }
}

const partitionOf = (input: Record<string, unknown>) =>
  (input.ExpressionAttributeValues as Record<string, unknown> | undefined)?.[':pk'];

let mark: Record<string, unknown> | undefined;

beforeAll(async () => {
  // The table as deployed before the change: calls at the one key, and no migration mark.
  mark = (await docClient().send(new GetCommand({ TableName: tableName(), Key: CALLS_MIGRATED_KEY }))).Item;
  await docClient().send(new DeleteCommand({ TableName: tableName(), Key: CALLS_MIGRATED_KEY }));
  forgetMigrationMark();
  for (let i = 0; i < LEGACY + SHARDED; i += 1) {
    const c = call(i);
    all.push(c);
    if (i < LEGACY) await docClient().send(new PutCommand({ TableName: tableName(), Item: legacyItem(c) }));
    else await CallEntity.create(c).go();
  }
});

afterAll(async () => {
  if (mark) await docClient().send(new PutCommand({ TableName: tableName(), Item: mark }));
  forgetMigrationMark();
});

test('the shards and the old key list as one key did: newest first, page after page, none twice', async () => {
  const { result: first, seen } = await recording(() =>
    listCalls(workspaceId, ListCallsQuery.parse({ limit: 20 })),
  );
  expect(first.items.map((c) => c.callId)).toEqual(newestFirst().slice(0, 20));
  // One query a shard and one of the old key, in parallel (a rare skewed page asks one shard again).
  const queried = new Set(seen.filter((s) => s.command === 'QueryCommand').map((s) => partitionOf(s.input)));
  expect(queried).toEqual(
    new Set([
      ...Array.from({ length: CALL_SHARDS }, (_, n) => callsShardKey(workspaceId, n)),
      legacyCallsKey(workspaceId),
    ]),
  );
  expect(await walk({ limit: 7 })).toEqual(newestFirst());
});

test('filters and dates hold across the shards', async () => {
  const inbound = all.filter((c) => c.direction === 'inbound').map((c) => c.callId);
  expect(await walk({ direction: 'inbound', limit: 4 })).toEqual(inbound.sort((a, b) => (a < b ? 1 : -1)));
  // Dates are the ids' times (ULIDs): the calls between the 31st's and the 51st's.
  const time = (c: Call) => decodeTime(c.callId.slice('call_'.length));
  const [from, to] = [time(all[30]), time(all[50])];
  const ids = await walk({ from: new Date(from).toISOString(), to: new Date(to).toISOString(), limit: 6 });
  const expected = all
    .filter((c) => time(c) >= from && time(c) <= to)
    .map((c) => c.callId)
    .sort((a, b) => (a < b ? 1 : -1));
  expect(expected.length).toBeGreaterThanOrEqual(21);
  expect(ids).toEqual(expected);
});

test('a cursor handed out before the change (the one key`s start key) keeps its place', async () => {
  const at = newestFirst()[9];
  const old = Buffer.from(
    JSON.stringify({ pk: legacyCallsKey(workspaceId), sk: `CALL#${at}` }),
    'utf8',
  ).toString('base64url');
  const page = await listCalls(workspaceId, ListCallsQuery.parse({ limit: 5, cursor: old }));
  expect(page.items.map((c) => c.callId)).toEqual(newestFirst().slice(10, 15));
  await expect(
    listCalls(workspaceId, ListCallsQuery.parse({ cursor: 'bm90LWEtY3Vyc29y' })),
  ).rejects.toMatchObject({
    status: 422,
  });
});

test('a shard whose query fails fails the page (503), never a page without its calls', async () => {
  const broken = callsShardKey(workspaceId, 3);
  const { result } = await recording(
    () => listCalls(workspaceId, ListCallsQuery.parse({ limit: 20 })).catch((error: unknown) => error),
    (input) => partitionOf(input) === broken,
  );
  expect(result).toMatchObject({ status: 503, message: CALL_LOG_UNAVAILABLE });
});

test('a call still at the old key is moved to its shard when read, once', async () => {
  const c = all[0];
  const read = await readCall(workspaceId, c.callId);
  expect(read?.callId).toBe(c.callId);
  expect(read?.callShard).toBe(callShardOf(c.callId));
  const at = (pk: string) =>
    docClient().send(new GetCommand({ TableName: tableName(), Key: { pk, sk: `CALL#${c.callId}` } }));
  expect((await at(legacyCallsKey(workspaceId))).Item).toBeUndefined();
  expect((await at(callsShardKey(workspaceId, callShardOf(c.callId)))).Item?.status).toBe('completed');
  // Written at its key now: a write by key finds it.
  await CallEntity.patch({ workspaceId, callId: c.callId, callShard: callShardOf(c.callId) })
    .set({ endedBy: 'test' })
    .go();
});

test('the migration, interrupted and run again, moves every call once and marks the table', async () => {
  const interrupted = new Error('interrupted');
  let pages = 0;
  await expect(
    migrateCalls({
      restart: true,
      pageSize: 50,
      onPage: () => {
        pages += 1;
        if (pages === 1) throw interrupted;
      },
    }),
  ).rejects.toBe(interrupted);
  const first = await migrateCalls({ pageSize: 50 });
  // The moves of both runs add up to the calls left at the old key (one was moved when read).
  expect(first.moved).toBe(LEGACY - 1);
  const legacy = await docClient().send(
    new QueryCommand({
      TableName: tableName(),
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': legacyCallsKey(workspaceId) },
      ConsistentRead: true,
    }),
  );
  expect(legacy.Items).toEqual([]);
  const again = await migrateCalls({ pageSize: 50 });
  expect(again.moved).toBe(0);
  const marked = await docClient().send(new GetCommand({ TableName: tableName(), Key: CALLS_MIGRATED_KEY }));
  expect(marked.Item?.shards).toBe(CALL_SHARDS);
  // Migrated: the listing reads the shards only, and lists the same calls.
  const { result, seen } = await recording(() => walk({ limit: 100 }));
  expect(result).toEqual(newestFirst());
  expect(seen.filter((s) => partitionOf(s.input) === legacyCallsKey(workspaceId))).toEqual([]);
});
