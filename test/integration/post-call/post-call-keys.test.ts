import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { legacyLayoutInUse } from '../../../functions/calling/call-log-merge.js';
import { beforeMigration, dropMigrationMark } from '../../helpers/migration-mark.js';
import { migrateCalls } from '../../../functions/table-migration.js';
import { CALLS_MIGRATED_KEY, MIGRATION_LAYOUT } from '../../../functions/calling/call-shards.js';
import { getBillingAccount, recordMovement } from '../../../functions/billing/ledger.js';
import { legacyLedgerKey } from '../../../functions/billing/entities.js';
import { newId } from '../../../functions/platform/ids.js';
import { newOrganisation } from '../billing/fixtures.js';
import { docClient, tableName } from '../../../functions/platform/table.js';
import {
  ActionRunEntity,
  moveLegacyPostCall,
  PostCallRecordEntity,
  readActionRun,
  readPostCallRecord,
} from '../../../functions/post-call/entities.js';
import { SmsLastOutboundEntity, SmsMessageEntity } from '../../../functions/sms/entities.js';
import { getMessage } from '../../../functions/sms/messages.js';
import { getDelivery } from '../../../functions/webhook-deliveries/attempts.js';
import { listDeliveries } from '../../../functions/webhook-deliveries/deliveries.js';
import { WebhookDeliveryEntity } from '../../../functions/webhook-deliveries/entities.js';

/**
 * A call's post-call record and runs moved off the workspace's key (`WS#<ws>`) to their call's own
 * (`WS#<ws>#POSTCALL#<call>`): those a table held before are moved when the pipeline reads them, or
 * by `migrate calls`, once, and the migration's mark then says the old keys hold nothing.
 */

const workspaceId = newId('workspace');
const now = new Date().toISOString();

/** A record and one run of a new call, as the workspace's key held them before the move. */
async function legacyPostCall(): Promise<{ callId: string; actionId: string }> {
  const callId = newId('call');
  const actionId = newId('action');
  const organisationId = newId('organisation');
  const agentId = newId('agent');
  const { Item: record } = PostCallRecordEntity.create({
    workspaceId,
    callId,
    organisationId,
    agentId,
    record: '{}',
    actions: JSON.stringify([{ actionId, type: 'webhook', config: {} }]),
    builtAt: now,
    runsCreated: true,
  }).params() as { Item: Record<string, unknown> };
  const { Item: run } = ActionRunEntity.create({
    workspaceId,
    callId,
    actionId,
    organisationId,
    agentId,
    type: 'webhook',
    config: '{}',
    state: 'held',
    tries: 0,
    createdAt: now,
    updatedAt: now,
  }).params() as { Item: Record<string, unknown> };
  const old = { pk: `WS#${workspaceId}` };
  await put({ ...record, ...old, sk: `POSTCALL#${callId}` });
  await put({ ...run, ...old, sk: `POSTCALL#${callId}#ACTION#${actionId}` });
  return { callId, actionId };
}

const put = (Item: Record<string, unknown>) =>
  docClient().send(new PutCommand({ TableName: tableName(), Item }));
const legacy = async (sk: string) =>
  (
    await docClient().send(
      new GetCommand({ TableName: tableName(), Key: { pk: `WS#${workspaceId}`, sk }, ConsistentRead: true }),
    )
  ).Item;

// A table migrated when only the calls were sharded (layout 1): the post-call items are at the old key.
beforeMigration();

test('a read moves a legacy record and its runs to the call’s key, once', async () => {
  const { callId, actionId } = await legacyPostCall();
  expect(await legacyLayoutInUse()).toBe(true);
  expect((await readPostCallRecord(workspaceId, callId)).data).toBeNull();

  expect(await moveLegacyPostCall(workspaceId, callId)).toBe(true);
  expect((await readPostCallRecord(workspaceId, callId)).data).toMatchObject({ callId, runsCreated: true });
  expect((await readActionRun(workspaceId, callId, actionId)).data).toMatchObject({
    actionId,
    state: 'held',
  });
  expect(await legacy(`POSTCALL#${callId}`)).toBeUndefined();
  expect(await legacy(`POSTCALL#${callId}#ACTION#${actionId}`)).toBeUndefined();
  // Moved already: nothing at the old key, nothing moved twice.
  expect(await moveLegacyPostCall(workspaceId, callId)).toBe(false);
  expect(await moveLegacyPostCall(workspaceId, newId('call'))).toBe(false);
});

/** A succeeded post-call delivery of a new call, as WebhookDeliveryEntity takes it. */
const deliveryOf = (ws: string, deliveryId: string, endpointId?: string) => ({
  workspaceId: ws,
  deliveryId,
  organisationId: newId('organisation'),
  webhookId: newId('message'),
  eventType: 'call.ended',
  callId: newId('call'),
  url: 'https://example.com/hook',
  payload: '{}',
  kind: 'post_call' as const,
  state: 'succeeded' as const,
  maxAttempts: 5,
  ...(endpointId ? { endpointId } : {}),
  createdAt: now,
  updatedAt: now,
});

/** An entity's item as the workspace's key held it before (its sort key unchanged, no listing index). */
const atWorkspaceKey = (params: unknown): Record<string, unknown> => {
  const { Item } = params as { Item: Record<string, unknown> };
  const { gsi2pk: _pk, gsi2sk: _sk, ...item } = Item;
  return { ...item, pk: `WS#${workspaceId}` };
};

test('an SMS message, a number’s last outbound and a webhook delivery at the old key are moved when read', async () => {
  const messageId = newId('sms');
  const deliveryId = newId('delivery');
  const phone = '+61491570199';
  await put(
    atWorkspaceKey(
      SmsMessageEntity.create({
        workspaceId,
        messageId,
        organisationId: newId('organisation'),
        contactId: newId('contact'),
        direction: 'outbound',
        kind: 'post_call',
        toPhone: phone,
        fromPhone: '+61255500001',
        body: 'Thanks for calling',
        segments: 1,
        encoding: 'GSM-7',
        status: 'sent',
        createdAt: now,
        updatedAt: now,
      }).params(),
    ),
  );
  await put(
    atWorkspaceKey(SmsLastOutboundEntity.create({ workspaceId, phone, messageId, sentAt: now }).params()),
  );
  await put(atWorkspaceKey(WebhookDeliveryEntity.create(deliveryOf(workspaceId, deliveryId)).params()));
  expect(await legacyLayoutInUse()).toBe(true);
  // Moved by a read of its id.
  expect((await getMessage(workspaceId, messageId))?.body).toBe('Thanks for calling');
  expect(await legacy(`SMS#${messageId}`)).toBeUndefined();
  expect((await getDelivery(workspaceId, deliveryId))?.state).toBe('succeeded');
  expect(await legacy(`WHDELIVERY#${deliveryId}`)).toBeUndefined();
  const listed = await listDeliveries(workspaceId, { limit: 10 });
  expect(listed.items.map((d) => d.deliveryId)).toContain(deliveryId);
  // The last outbound is moved by migrate calls here (an inbound reply would move it when read).
  await migrateCalls({ pageSize: 200 });
  expect(await legacy(`SMSLAST#${phone}`)).toBeUndefined();
  expect(
    (await SmsLastOutboundEntity.get({ workspaceId, phone }).go({ consistent: true })).data?.messageId,
  ).toBe(messageId);
});

test('until migrated, the workspace’s deliveries listing goes on at the old key: every delivery once, newest first, with or without an endpoint', async () => {
  await dropMigrationMark();
  const ws = newId('workspace');
  const endpointId = newId('webhookEndpoint');
  const old = [newId('delivery'), newId('delivery'), newId('delivery')].sort();
  for (const [i, id] of old.entries()) {
    const { Item } = WebhookDeliveryEntity.create(
      deliveryOf(ws, id, i === 1 ? endpointId : undefined),
    ).params() as {
      Item: Record<string, unknown>;
    };
    const { gsi2pk: _pk, gsi2sk: _sk, ...item } = Item;
    await put({ ...item, pk: `WS#${ws}` });
  }
  await new Promise((resolve) => setTimeout(resolve, 2)); // the new deliveries' ids are later
  const made = [newId('delivery'), newId('delivery')].sort();
  for (const [i, id] of made.entries())
    await WebhookDeliveryEntity.create(deliveryOf(ws, id, i === 0 ? endpointId : undefined)).go();

  const listAll = async (options: { endpointId?: string }) => {
    const ids: string[] = [];
    let cursor: string | undefined;
    for (let pages = 0; pages < 10; pages += 1) {
      const page = await listDeliveries(ws, { limit: 2, ...options, ...(cursor ? { cursor } : {}) });
      ids.push(...page.items.map((d) => d.deliveryId));
      if (!page.nextCursor) return ids;
      cursor = page.nextCursor;
    }
    throw new Error('the listing did not end');
  };
  expect(await listAll({})).toEqual([...old, ...made].reverse());
  expect(await listAll({ endpointId })).toEqual([made[0], old[1]]);
  // Listed, not moved: the old key still holds them for migrate calls.
  for (const id of old) {
    const { Item } = await docClient().send(
      new GetCommand({
        TableName: tableName(),
        Key: { pk: `WS#${ws}`, sk: `WHDELIVERY#${id}` },
        ConsistentRead: true,
      }),
    );
    expect(Item?.deliveryId).toBe(id);
  }
});

test('a cause charged before its key moved is not charged again (its old key checked until migrated)', async () => {
  // Before the migration (the test before marked the table migrated).
  await dropMigrationMark();
  const { organisationId } = await newOrganisation('ledger-keys');
  const sourceKey = `purchase:before-${newId('call')}`;
  await put({
    ...legacyLedgerKey(organisationId, sourceKey),
    organisationId,
    sourceKey,
    entryId: newId('ledgerEntry'),
    __edb_e__: 'ledgerKey',
    __edb_v__: '1',
  });
  const before = (await getBillingAccount(organisationId, { consistent: true }))?.balanceUnits;
  const again = await recordMovement({
    organisationId,
    kind: 'purchase',
    amountUnits: 600,
    reason: 'again',
    sourceKey,
  });
  expect(again).toEqual({ applied: false, duplicate: true });
  expect((await getBillingAccount(organisationId, { consistent: true }))?.balanceUnits).toBe(before);
});

test('migrate calls moves every legacy post-call item and marks the new layout', async () => {
  const calls = [await legacyPostCall(), await legacyPostCall()];
  const progress = await migrateCalls({ pageSize: 200 });
  expect(progress.moved).toBeGreaterThanOrEqual(4);
  for (const { callId, actionId } of calls) {
    expect((await readPostCallRecord(workspaceId, callId)).data?.callId).toBe(callId);
    expect((await readActionRun(workspaceId, callId, actionId)).data?.actionId).toBe(actionId);
    expect(await legacy(`POSTCALL#${callId}`)).toBeUndefined();
  }
  const marked = await docClient().send(new GetCommand({ TableName: tableName(), Key: CALLS_MIGRATED_KEY }));
  expect(marked.Item?.layout).toBe(MIGRATION_LAYOUT);
  expect(await legacyLayoutInUse()).toBe(false);
});
