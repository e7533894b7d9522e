import type { StoredItem, TableKey, TransactionItem } from '../platform/table.js';
import { callShardOf, callTableKey } from './call-shards.js';
import type { Call } from './entities.js';
import { NO_REMOTE_PHONE, remotePhoneOf } from './remote-phone.js';

/**
 * What start-call reads and writes, as plain keys and items (platform/table.ts getStoredItems,
 * writeStoredItems): start-call is the hot path, and ElectroDB's own work on each request was most of
 * its CPU beside the SDK's. These are exactly the keys and transaction items the entities build
 * (the templates of access/, agents/, billing/, numbers/, calling/ and platform/idempotency.ts
 * entities, with ElectroDB's `__edb_e__` / `__edb_v__` identifiers): test/unit/hot-path-items.test.ts
 * compares them with the entities' params, so a change to an entity's keys fails there first.
 */
export const startCallKeys = {
  workspace: (workspaceId: string): TableKey => ({ pk: `WS#${workspaceId}`, sk: 'WORKSPACE' }),
  workspaceMember: (workspaceId: string, userId: string): TableKey => ({
    pk: `WS#${workspaceId}`,
    sk: `MEMBER#${userId}`,
  }),
  orgMember: (organisationId: string, userId: string): TableKey => ({
    pk: `ORG#${organisationId}`,
    sk: `MEMBER#${userId}`,
  }),
  billingAccount: (organisationId: string): TableKey => ({ pk: `ORG#${organisationId}`, sk: 'BILLING' }),
  agent: (workspaceId: string, agentId: string): TableKey => ({
    pk: `WS#${workspaceId}`,
    sk: `AGENT#${agentId}`,
  }),
  /** One version of the agent (agents/entities.ts AgentVersionEntity): a call pinned to it. */
  agentVersion: (workspaceId: string, agentId: string, version: number): TableKey => ({
    pk: `WS#${workspaceId}#AGENT#${agentId}`,
    sk: `VERSION#${String(version).padStart(10, '0')}`,
  }),
  phoneClaim: (phoneNumber: string): TableKey => ({ pk: `PHONE#${phoneNumber}`, sk: 'PHONE' }),
  /** The workspace's contact with this number (contacts/entities.ts ContactPhoneEntity): the call's contact. */
  contactPhone: (workspaceId: string, phone: string): TableKey => ({
    pk: `WS#${workspaceId}`,
    sk: `CONTACTPHONE#${phone}`,
  }),
};

/** An item read as stored, as its entity's item (the keys and identifiers it also holds are unused). */
export const asEntityItem = <T>(item: StoredItem | undefined): T | undefined => item as T | undefined;

const identifiers = (entity: string) => ({ __edb_e__: entity, __edb_v__: '1' });
const created = { ConditionExpression: 'attribute_not_exists(#pk) AND attribute_not_exists(#sk)' };
const keyNames = { '#pk': 'pk', '#sk': 'sk' };

/**
 * Start-call's one transaction, in this order (a cancellation's reasons are read by position): the
 * call, its first status event, its sweeper marker, the workspace's concurrency slot
 * (calling/concurrency.ts's condition), the agent still holding the number the call is placed from,
 * and — with an Idempotency-Key — the key completed with the response.
 */
export function startCallTransaction(input: {
  call: Call;
  idempotency?: { scope: string; key: string; token: string; response: string };
}): TransactionItem[] {
  const { call, idempotency } = input;
  const { workspaceId, callId, createdAt } = call;
  const remotePhone = remotePhoneOf(call);
  const items: TransactionItem[] = [
    {
      Put: {
        Item: {
          ...call,
          ...callTableKey(workspaceId, callId),
          gsi1pk: `WS#${workspaceId}#AGENT#${call.agentId}#CALLS#${callShardOf(callId)}`,
          gsi1sk: callId,
          ...(remotePhone
            ? { remotePhone, gsi2pk: `WS#${workspaceId}#PHONE#${remotePhone}#CALLS`, gsi2sk: callId }
            : { remotePhone: NO_REMOTE_PHONE }),
          ...identifiers('call'),
        },
        ...created,
        ExpressionAttributeNames: keyNames,
      },
    },
    {
      Put: {
        Item: {
          callId,
          workspaceId,
          rank: call.statusRank,
          status: call.status,
          at: createdAt,
          source: 'api',
          recordedAt: createdAt,
          pk: `CALL#${callId}`,
          sk: `STATUS#${call.statusRank}#${call.status}`,
          ...identifiers('callStatusEvent'),
        },
        ...created,
        ExpressionAttributeNames: keyNames,
      },
    },
    {
      Put: {
        Item: {
          shard: call.openShard,
          createdAt,
          callId,
          workspaceId,
          pk: `OPENCALLS#${call.openShard}`,
          sk: `${createdAt}#${callId}`,
          ...identifiers('openCall'),
        },
        ...created,
        ExpressionAttributeNames: keyNames,
      },
    },
    {
      Update: {
        UpdateExpression:
          'SET #workspaceId = :workspaceId_u0, #__edb_e__ = :__edb_e___u0, #__edb_v__ = :__edb_v___u0 ADD #activeCalls :activeCalls_u0',
        ExpressionAttributeNames: {
          ...keyNames,
          '#activeCalls': 'activeCalls',
          '#concurrentCallLimit': 'concurrentCallLimit',
          '#deletedAt': 'deletedAt',
          '#workspaceId': 'workspaceId',
          '#__edb_e__': '__edb_e__',
          '#__edb_v__': '__edb_v__',
        },
        ExpressionAttributeValues: {
          ':activeCalls_u0': 1,
          ':workspaceId_u0': workspaceId,
          ':__edb_e___u0': 'workspace',
          ':__edb_v___u0': '1',
        },
        Key: startCallKeys.workspace(workspaceId),
        ConditionExpression:
          'attribute_exists(#pk) AND attribute_exists(#sk) AND #activeCalls < #concurrentCallLimit AND attribute_not_exists(#deletedAt)',
      },
    },
    {
      ConditionCheck: {
        Key: startCallKeys.agent(workspaceId, call.agentId),
        ConditionExpression: '#phoneNumber = :phoneNumber0',
        ExpressionAttributeNames: { '#phoneNumber': 'phoneNumber' },
        ExpressionAttributeValues: { ':phoneNumber0': call.fromPhone },
      },
    },
  ];
  if (idempotency) {
    items.push({
      Update: {
        UpdateExpression:
          'SET #state = :state_u0, #callId = :callId_u0, #response = :response_u0, #scope = :scope_u0, #key = :key_u0, #__edb_e__ = :__edb_e___u0, #__edb_v__ = :__edb_v___u0',
        ExpressionAttributeNames: {
          ...keyNames,
          '#token': 'token',
          '#state': 'state',
          '#callId': 'callId',
          '#response': 'response',
          '#scope': 'scope',
          '#key': 'key',
          '#__edb_e__': '__edb_e__',
          '#__edb_v__': '__edb_v__',
        },
        ExpressionAttributeValues: {
          ':token0': idempotency.token,
          ':state0': 'in_flight',
          ':state_u0': 'completed',
          ':callId_u0': callId,
          ':response_u0': idempotency.response,
          ':scope_u0': idempotency.scope,
          ':key_u0': idempotency.key,
          ':__edb_e___u0': 'idempotencyKey',
          ':__edb_v___u0': '1',
        },
        Key: { pk: `IDEM#${idempotency.scope}#${idempotency.key}`, sk: 'IDEM' },
        ConditionExpression:
          'attribute_exists(#pk) AND attribute_exists(#sk) AND #token = :token0 AND #state = :state0',
      },
    });
  }
  return items;
}
