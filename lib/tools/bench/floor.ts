import {
  GetItemCommand,
  PutItemCommand,
  TransactWriteItemsCommand,
  type AttributeValue,
} from '@aws-sdk/client-dynamodb';
import { CreateQueueCommand, DeleteQueueCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { dynamoClient, resetTableClients, tableName } from '../../../functions/platform/table.js';
import { resetQueueClient, sqsClient } from '../../../functions/platform/queue.js';
import { callTableKey } from '../../../functions/calling/call-shards.js';

/**
 * The floor under start-call: the least work any implementation of it must do, done directly with
 * the SDK against the same DynamoDB Local and fauxqs, with the handlers' own clients
 * (functions/platform/table.ts, queue.ts: same configuration, same middleware) — three GetItem (the
 * API key, the workspace, the agent), one TransactWriteItems of start-call's five items (the call,
 * its first status event, its sweeper marker, the workspace's concurrency slot, the agent's number
 * check) and one SendMessage, one after another. The items are copies of a real call's (same
 * attributes and sizes) under bench-only keys, the slot is a bench-only counter, and the message goes
 * to a bench-only queue: nothing is dispatched and the workspace's calls are untouched. The process
 * must have the stack's environment (its endpoints and table); cleanup() forgets the clients.
 */
export interface Floor {
  op: (index: number) => Promise<void>;
  cleanup(): Promise<void>;
}

type Item = Record<string, AttributeValue>;
const S = (value: string): AttributeValue => ({ S: value });
const PREFIX = 'BENCHFLOOR';

async function getItem(pk: string, sk: string): Promise<Item> {
  const { Item } = await dynamoClient().send(
    new GetItemCommand({ TableName: tableName(), Key: { pk: S(pk), sk: S(sk) }, ConsistentRead: true }),
  );
  if (!Item) throw new Error(`bench floor: no item ${pk} / ${sk}`);
  return Item;
}

export async function prepareFloor(input: {
  workspaceId: string;
  agentId: string;
  /** The API key start-call is called with (`vak_<key id>_<secret>`). */
  apiKey: string;
  /** A call start-call created: its items give the floor's their shape. */
  callId: string;
}): Promise<Floor> {
  const table = tableName();
  const keyId = input.apiKey.slice('vak_'.length, 'vak_'.length + 'key_'.length + 26);
  const keys = {
    apiKey: { pk: S(`APIKEY#${keyId}`), sk: S('APIKEY') },
    workspace: { pk: S(`WS#${input.workspaceId}`), sk: S('WORKSPACE') },
    agent: { pk: S(`WS#${input.workspaceId}`), sk: S(`AGENT#${input.agentId}`) },
  };
  const callKey = callTableKey(input.workspaceId, input.callId);
  const call = await getItem(callKey.pk, callKey.sk);
  const event = await getItem(`CALL#${input.callId}`, 'STATUS#0#created');
  const marker = await getItem(`OPENCALLS#${call.openShard?.N}`, `${call.createdAt?.S}#${input.callId}`);
  const workspace = await getItem(keys.workspace.pk.S!, keys.workspace.sk.S!);
  const agent = await getItem(keys.agent.pk.S!, keys.agent.sk.S!);
  const slot = { pk: S(`${PREFIX}#WS`), sk: S('WORKSPACE') };
  await dynamoClient().send(
    new PutItemCommand({
      TableName: table,
      Item: { ...workspace, ...slot, activeCalls: { N: '0' }, concurrentCallLimit: { N: '1000000000' } },
    }),
  );
  const sqs = await sqsClient();
  const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: `bench-floor-${process.pid}` }));
  if (!QueueUrl) throw new Error('bench floor: no queue');

  const notExists = 'attribute_not_exists(#pk) AND attribute_not_exists(#sk)';
  const keyNames = { '#pk': 'pk', '#sk': 'sk' };
  const put = (item: Item) => ({
    Put: { TableName: table, Item: item, ConditionExpression: notExists, ExpressionAttributeNames: keyNames },
  });
  const op = async (index: number) => {
    const callId = `call_${PREFIX}${String(index).padStart(10, '0')}`;
    const client = dynamoClient();
    await client.send(new GetItemCommand({ TableName: table, Key: keys.apiKey }));
    await client.send(new GetItemCommand({ TableName: table, Key: keys.workspace }));
    await client.send(new GetItemCommand({ TableName: table, Key: keys.agent }));
    await client.send(
      new TransactWriteItemsCommand({
        TransactItems: [
          put({
            ...call,
            pk: S(`${PREFIX}#CALLS`),
            sk: S(`CALL#${callId}`),
            gsi1pk: S(`${PREFIX}#AGENT#CALLS`),
            gsi1sk: S(callId),
            callId: S(callId),
          }),
          put({ ...event, pk: S(`${PREFIX}#CALL#${callId}`), callId: S(callId) }),
          put({
            ...marker,
            pk: S(`${PREFIX}#OPENCALLS`),
            sk: S(`${call.createdAt?.S}#${callId}`),
            callId: S(callId),
          }),
          {
            Update: {
              TableName: table,
              Key: slot,
              UpdateExpression: 'ADD #active :one',
              ConditionExpression: '#active < #limit AND attribute_not_exists(#deleted)',
              ExpressionAttributeNames: {
                '#active': 'activeCalls',
                '#limit': 'concurrentCallLimit',
                '#deleted': 'deletedAt',
              },
              ExpressionAttributeValues: { ':one': { N: '1' } },
            },
          },
          {
            ConditionCheck: {
              TableName: table,
              Key: keys.agent,
              ConditionExpression: '#phone = :phone',
              ExpressionAttributeNames: { '#phone': 'phoneNumber' },
              ExpressionAttributeValues: { ':phone': agent.phoneNumber ?? S('') },
            },
          },
        ],
      }),
    );
    await sqs.send(
      new SendMessageCommand({
        QueueUrl,
        MessageBody: JSON.stringify({
          type: 'call.dispatch',
          call_id: callId,
          workspace_id: input.workspaceId,
        }),
      }),
    );
  };
  return {
    op,
    cleanup: async () => {
      await sqs.send(new DeleteQueueCommand({ QueueUrl }));
      // The clients read this stack's endpoints once: a later part of the bench starts another stack.
      resetTableClients();
      resetQueueClient();
    },
  };
}
