import { DeleteCommand, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { forgetMigrationMark, legacyLayoutInUse } from '../../../functions/calling/call-log-merge.js';
import { migrateCalls, moveLegacyPostCall } from '../../../functions/calling/call-migration.js';
import { CALLS_MIGRATED_KEY, MIGRATION_LAYOUT } from '../../../functions/calling/call-shards.js';
import { newId } from '../../../functions/platform/ids.js';
import { docClient, tableName } from '../../../functions/platform/table.js';
import {
  ActionRunEntity,
  PostCallRecordEntity,
  readActionRun,
  readPostCallRecord,
} from '../../../functions/post-call/entities.js';

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

let mark: Record<string, unknown> | undefined;

beforeAll(async () => {
  // A table migrated when only the calls were sharded (layout 1): the post-call items are at the old key.
  mark = (await docClient().send(new GetCommand({ TableName: tableName(), Key: CALLS_MIGRATED_KEY }))).Item;
  await docClient().send(new DeleteCommand({ TableName: tableName(), Key: CALLS_MIGRATED_KEY }));
  forgetMigrationMark();
});

afterAll(async () => {
  if (mark) await put(mark);
  forgetMigrationMark();
});

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
  mark = marked.Item;
});
