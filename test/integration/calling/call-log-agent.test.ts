import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { listCalls } from '../../../functions/calling/call-log.js';
import { callShardOf } from '../../../functions/calling/call-shards.js';
import { CallEntity, type Call } from '../../../functions/calling/entities.js';
import { ListCallsQuery } from '../../../functions/calling/schemas.js';
import { newId } from '../../../functions/platform/ids.js';
import { docClient, tableName } from '../../../functions/platform/table.js';

/**
 * The call log by agent: the agent's index is sharded as the calls are (one key an agent took every
 * write of its calls, docs/scale.md), and calls written before keep the one old key: the listing
 * merges both, newest first, in pages that neither skip nor repeat a call.
 */

const workspaceId = newId('workspace');
const agentId = newId('agent');
const OLD = 7;
const NEW = 40;
const ids: string[] = [];

function call(i: number): Call {
  const callId = newId('call');
  const at = new Date(Date.now() - (OLD + NEW - i) * 1000).toISOString();
  return {
    workspaceId,
    callId,
    callShard: callShardOf(callId),
    organisationId: newId('organisation'),
    agentId: i % 5 === 4 ? newId('agent') : agentId,
    direction: 'outbound',
    toPhone: '+61255500001',
    fromPhone: '+61491570101',
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

beforeAll(async () => {
  for (let i = 0; i < OLD + NEW; i += 1) {
    const c = call(i);
    if (c.agentId === agentId) ids.push(c.callId);
    const { Item } = CallEntity.create(c).params() as { Item: Record<string, unknown> };
    // The oldest calls as written before the agent's index was sharded: its one old key.
    const item =
      i < OLD && c.agentId === agentId
        ? { ...Item, gsi1pk: `WS#${workspaceId}#AGENT#${agentId}#CALLS` }
        : Item;
    await docClient().send(new PutCommand({ TableName: tableName(), Item: item }));
  }
});

test("an agent's calls, from its index's shards and its old key, newest first, page by page", async () => {
  const seen: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await listCalls(
      workspaceId,
      ListCallsQuery.parse({ agent_id: agentId, limit: 7, ...(cursor ? { cursor } : {}) }),
    );
    expect(page.items.every((c) => c.agentId === agentId)).toBe(true);
    seen.push(...page.items.map((c) => c.callId));
    cursor = page.nextCursor ?? undefined;
  } while (cursor);
  expect(seen).toEqual([...ids].sort().reverse());
});

test('a cursor of the unsharded index, handed out before, goes on from its call', async () => {
  const newestFirst = [...ids].sort().reverse();
  const at = newestFirst[9];
  // ElectroDB's cursor of the old index: the page's last item's table and index keys.
  const cursor = Buffer.from(
    JSON.stringify({
      pk: `WS#${workspaceId}#CALLS`,
      sk: `CALL#${at}`,
      gsi1pk: `WS#${workspaceId}#AGENT#${agentId}#CALLS`,
      gsi1sk: at,
    }),
    'utf8',
  ).toString('base64url');
  const page = await listCalls(workspaceId, ListCallsQuery.parse({ agent_id: agentId, limit: 100, cursor }));
  expect(page.items.map((c) => c.callId)).toEqual(newestFirst.slice(10));
});
