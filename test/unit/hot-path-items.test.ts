/**
 * The hot paths read and write plain items (platform/table.ts getStoredItem(s), writeStoredItems):
 * an API key's authentication and start-call. Their keys and start-call's transaction must be exactly
 * what the entities build, or ElectroDB would not find (or would misread) what start-call wrote. These
 * compare them with the entities' own params, for the API-key path, the JWT path, and with and without
 * an Idempotency-Key.
 */
import { AgentEntity, AgentVersionEntity } from '../../functions/agents/entities.js';
import { OrgMemberEntity, WorkspaceEntity, WorkspaceMemberEntity } from '../../functions/access/entities.js';
import { BillingAccountEntity } from '../../functions/billing/entities.js';
import { takeConcurrencySlot } from '../../functions/calling/concurrency.js';
import { callingService, type Call } from '../../functions/calling/entities.js';
import { ContactPhoneEntity } from '../../functions/contacts/entities.js';
import { startCallKeys, startCallTransaction } from '../../functions/calling/start-call-items.js';
import { callShardOf } from '../../functions/calling/call-shards.js';
import { PhoneClaimEntity } from '../../functions/numbers/entities.js';
import { ApiKeyEntity, apiKeyItemKey } from '../../functions/platform/auth/entities.js';

const withoutTable = (items: Record<string, Record<string, unknown>>[]) =>
  items.map((item) =>
    Object.fromEntries(
      Object.entries(item).map(([kind, { TableName: _table, ...request }]) => [kind, request]),
    ),
  );

const call: Call = {
  workspaceId: 'ws_01ARZ3NDEKTSV4RRFFQ69G5FAV',
  callId: 'call_01ARZ3NDEKTSV4RRFFQ69G5FAW',
  callShard: callShardOf('call_01ARZ3NDEKTSV4RRFFQ69G5FAW'),
  organisationId: 'org_01ARZ3NDEKTSV4RRFFQ69G5FAX',
  agentId: 'ag_01ARZ3NDEKTSV4RRFFQ69G5FAY',
  direction: 'outbound',
  toPhone: '+61491570156',
  fromPhone: '+61255501776',
  record: true,
  parameters: { name: 'Sam', listing_id: 'L-1001' },
  status: 'created',
  statusRank: 0,
  createdBy: 'key_01ARZ3NDEKTSV4RRFFQ69G5FAZ',
  createdAt: '2026-11-22T10:00:00.000Z',
  agentName: 'Ava',
  greeting: 'Hi {{name}}',
  prompt: 'You are Ava.',
  maxDurationSeconds: 600,
  deadlineAt: '2026-11-22T10:15:00.000Z',
  openShard: 5,
};

/** Start-call's transaction as the entities build it (what start-call wrote before it went plain). */
function entityTransaction(idempotency?: { scope: string; key: string; token: string; response: string }) {
  const { workspaceId, callId, createdAt } = call;
  return callingService.transaction
    .write(({ call: calls, callStatusEvent, openCall, workspace, agent, idempotencyKey }) => [
      calls.create(call).commit(),
      callStatusEvent
        .create({
          callId,
          workspaceId,
          rank: 0,
          status: 'created',
          at: createdAt,
          source: 'api',
          recordedAt: createdAt,
        })
        .commit(),
      openCall.create({ shard: call.openShard, createdAt, callId, workspaceId }).commit(),
      takeConcurrencySlot(workspace, workspaceId),
      agent
        .check({ workspaceId, agentId: call.agentId })
        .where((attr, op) => op.eq(attr.phoneNumber, call.fromPhone))
        .commit(),
      ...(idempotency
        ? [
            idempotencyKey
              .patch({ scope: idempotency.scope, key: idempotency.key })
              .set({ state: 'completed', callId, response: idempotency.response })
              .where(
                (attr, op) => `${op.eq(attr.token, idempotency.token)} AND ${op.eq(attr.state, 'in_flight')}`,
              )
              .commit(),
          ]
        : []),
    ])
    .params() as { TransactItems: Record<string, Record<string, unknown>>[] };
}

describe('hot-path items are the entities’ own', () => {
  it('the keys start-call and an API key’s authentication read', () => {
    const ws = call.workspaceId;
    const org = call.organisationId;
    const user = 'usr_01ARZ3NDEKTSV4RRFFQ69G5FB0';
    const pairs: [unknown, unknown][] = [
      [startCallKeys.workspace(ws), WorkspaceEntity.get({ workspaceId: ws }).params().Key],
      [
        startCallKeys.workspaceMember(ws, user),
        WorkspaceMemberEntity.get({ workspaceId: ws, userId: user }).params().Key,
      ],
      [
        startCallKeys.orgMember(org, user),
        OrgMemberEntity.get({ organisationId: org, userId: user }).params().Key,
      ],
      [startCallKeys.billingAccount(org), BillingAccountEntity.get({ organisationId: org }).params().Key],
      [
        startCallKeys.agent(ws, call.agentId),
        AgentEntity.get({ workspaceId: ws, agentId: call.agentId }).params().Key,
      ],
      [
        startCallKeys.agentVersion(ws, call.agentId, 12),
        AgentVersionEntity.get({ workspaceId: ws, agentId: call.agentId, version: 12 }).params().Key,
      ],
      [
        startCallKeys.phoneClaim(call.fromPhone),
        PhoneClaimEntity.get({ phoneNumber: call.fromPhone }).params().Key,
      ],
      [
        startCallKeys.contactPhone(ws, call.toPhone),
        ContactPhoneEntity.get({ workspaceId: ws, phone: call.toPhone }).params().Key,
      ],
      [apiKeyItemKey(call.createdBy), ApiKeyEntity.get({ keyId: call.createdBy }).params().Key],
    ];
    for (const [plain, entity] of pairs) expect(plain).toEqual(entity);
  });

  it('start-call’s transaction, without an Idempotency-Key', () => {
    expect(startCallTransaction({ call })).toEqual(withoutTable(entityTransaction().TransactItems));
  });

  it('start-call’s transaction, with an Idempotency-Key completed in it', () => {
    const idempotency = {
      scope: `${call.workspaceId}#${call.createdBy}`,
      key: 'retry-7',
      token: '7b0e4c4e-1f3a-4f59-9a55-2b1f7d0c9a11',
      response: JSON.stringify({ id: call.callId, status: 'created' }),
    };
    expect(startCallTransaction({ call, idempotency })).toEqual(
      withoutTable(entityTransaction(idempotency).TransactItems),
    );
  });
});
