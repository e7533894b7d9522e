import { newId } from '../../../functions/platform/ids.js';
import { sendMessage } from '../../../functions/platform/queue.js';
import type { ActionMessage } from '../../../functions/platform/queue-messages.js';
import {
  ActionRunEntity,
  PostCallRecordEntity,
  readActionRun,
} from '../../../functions/post-call/entities.js';
import { createDelivery } from '../../../functions/webhook-deliveries/deliveries.js';
import { readQuiescence, waitFor, waitForHandled } from '../../helpers/wait.js';
import {
  connectNumber,
  createAgent,
  deliveries,
  newTenant,
  startCall,
  receiversForThisFile,
  webhookDlqBodies,
  type Tenant,
} from './fixtures.js';

/**
 * Crashes between the post-call steps' writes and the messages that follow them lose nothing and
 * send nothing twice. ProcessCallEnded writes the record and the runs in one transaction, then sends
 * the actions' messages: a `call.ended` that comes back after the transaction sends them (once each
 * run, however often it comes back).
 *
 * The webhook action writes its delivery, claimed for its first attempt, in the transaction that
 * records the run's success, then makes that attempt at once. What a crash between steps leaves
 * behind is made good by the action's message coming back (SQS redelivers a message its consumer
 * did not finish), and the receiver still gets one request:
 *   - the run succeeded and its delivery exists with no attempt made or queued (a crash before the
 *     attempt);
 *   - the run is still queued and its delivery exists (a try before the delivery was written with
 *     the run, stopped after creating it).
 * The states are written here as those crashes leave them (on a real call's record for the action's).
 */

const receiver = receiversForThisFile();

async function endedCall(): Promise<{ tenant: Tenant; agentId: string; callId: string }> {
  const first = await receiver();
  const tenant = await newTenant();
  const agent = await createAgent(tenant, [{ type: 'webhook', config: { url: first.url } }]);
  await connectNumber(tenant, agent.id as string);
  const callId = await startCall(tenant, agent.id as string);
  await waitFor(async () => (await deliveries(tenant, callId))[0]?.state === 'succeeded', {
    what: 'the call’s own webhook',
    timeoutMs: 60_000,
  });
  return { tenant, agentId: agent.id as string, callId };
}

async function leftBehind(
  call: { tenant: Tenant; agentId: string; callId: string },
  url: string,
  state: 'succeeded' | 'queued',
): Promise<{ message: ActionMessage; deliveryId: string }> {
  const { tenant, agentId, callId } = call;
  const actionId = newId('action');
  const deliveryId = newId('delivery');
  const now = new Date().toISOString();
  await ActionRunEntity.create({
    workspaceId: tenant.workspaceId,
    callId,
    actionId,
    organisationId: tenant.organisationId,
    agentId,
    type: 'webhook',
    config: JSON.stringify({ url }),
    state,
    deliveryId,
    tries: state === 'succeeded' ? 1 : 0,
    createdAt: now,
    updatedAt: now,
    ...(state === 'succeeded'
      ? { completedAt: now, result: JSON.stringify({ delivery_id: deliveryId }) }
      : {}),
  }).go();
  // Created, its first attempt never queued (createDelivery queues nothing).
  await createDelivery({
    workspaceId: tenant.workspaceId,
    organisationId: tenant.organisationId,
    deliveryId,
    eventType: 'call.ended',
    callId,
    agentId,
    actionId,
    url,
    payload: JSON.stringify({ type: 'call.ended', data: { call_id: callId } }),
    kind: 'post_call',
  });
  return {
    deliveryId,
    message: {
      type: 'post_call.action',
      workspace_id: tenant.workspaceId,
      organisation_id: tenant.organisationId,
      call_id: callId,
      action_id: actionId,
    },
  };
}

it('a redelivered action message queues the first attempt a crash lost, once (twice redelivered)', async () => {
  const call = await endedCall();
  const hook = await receiver();
  const { message, deliveryId } = await leftBehind(call, hook.url, 'succeeded');

  const before = await readQuiescence();
  await Promise.all([sendMessage('postCallActions', message), sendMessage('postCallActions', message)]);
  await waitForHandled(before, { RunPostCallAction: 2 });

  expect(hook.requests).toHaveLength(1);
  const delivery = (await deliveries(call.tenant, call.callId)).find((d) => d.id === deliveryId);
  expect(delivery).toMatchObject({ state: 'succeeded', attempts: [{ status_code: 204 }] });
  const { data: run } = await readActionRun(call.tenant.workspaceId, call.callId, message.action_id);
  expect({ state: run?.state, tries: run?.tries }).toEqual({ state: 'succeeded', tries: 1 });
}, 120_000);

it('a queued run whose delivery an earlier try created finishes on it: one request, the run succeeded', async () => {
  const call = await endedCall();
  const hook = await receiver();
  const { message, deliveryId } = await leftBehind(call, hook.url, 'queued');

  const before = await readQuiescence();
  await sendMessage('postCallActions', message);
  await waitForHandled(before, { RunPostCallAction: 1, DeliverWebhook: 1 });

  expect(hook.requests).toHaveLength(1);
  const delivery = (await deliveries(call.tenant, call.callId)).find((d) => d.id === deliveryId);
  expect(delivery).toMatchObject({ state: 'succeeded', attempts: [{ status_code: 204 }] });
  const { data: run } = await readActionRun(call.tenant.workspaceId, call.callId, message.action_id);
  expect({ state: run?.state, tries: run?.tries }).toEqual({ state: 'succeeded', tries: 1 });
  expect(JSON.parse(run?.result ?? '{}')).toMatchObject({ delivery_id: deliveryId });
}, 120_000);

it('call.ended redelivered after its transaction (record, runs) but before the actions’ messages: each action runs once', async () => {
  const tenant = await newTenant();
  const hook = await receiver();
  const callId = newId('call');
  const actionId = newId('action');
  const deliveryId = newId('delivery');
  const now = new Date().toISOString();
  const agentId = newId('agent');
  // What the first delivery's transaction wrote before a crash: the record (with its runs) and the run.
  await PostCallRecordEntity.create({
    workspaceId: tenant.workspaceId,
    callId,
    organisationId: tenant.organisationId,
    agentId,
    record: JSON.stringify({ call_id: callId, workspace_id: tenant.workspaceId, summary: 'A call.' }),
    actions: JSON.stringify([{ actionId, type: 'webhook', config: { url: hook.url } }]),
    builtAt: now,
    runsCreated: true,
  }).go();
  await ActionRunEntity.create({
    workspaceId: tenant.workspaceId,
    callId,
    actionId,
    organisationId: tenant.organisationId,
    agentId,
    type: 'webhook',
    config: JSON.stringify({ url: hook.url }),
    state: 'queued',
    deliveryId,
    tries: 0,
    createdAt: now,
    updatedAt: now,
  }).go();

  const before = await readQuiescence();
  const ended = {
    type: 'call.ended' as const,
    call_id: callId,
    workspace_id: tenant.workspaceId,
    organisation_id: tenant.organisationId,
  };
  await Promise.all([sendMessage('postCall', ended), sendMessage('postCall', ended)]);
  await waitForHandled(before, { ProcessCallEnded: 2, RunPostCallAction: 2 });

  expect(hook.requests).toHaveLength(1);
  expect(JSON.parse(hook.requests[0].body)).toMatchObject({ type: 'call.ended', data: { call_id: callId } });
  const [delivery] = await deliveries(tenant, callId);
  expect(delivery).toMatchObject({ id: deliveryId, state: 'succeeded', attempts: [{ status_code: 204 }] });
  const { data: run } = await readActionRun(tenant.workspaceId, callId, actionId);
  expect({ state: run?.state, tries: run?.tries }).toEqual({ state: 'succeeded', tries: 1 });
}, 120_000);

it('a first attempt, made by the action, that leaves the delivery dead puts its attempt’s message in the DLQ, as a queued attempt’s', async () => {
  const rejecting = await receiver(() => ({ status: 422, body: 'no thanks' }));
  const tenant = await newTenant();
  const agent = await createAgent(tenant, [{ type: 'webhook', config: { url: rejecting.url } }]);
  await connectNumber(tenant, agent.id as string);
  const callId = await startCall(tenant, agent.id as string);
  const dead = await waitFor(
    async () => {
      const [delivery] = await deliveries(tenant, callId);
      return delivery?.state === 'dead' ? delivery : undefined;
    },
    { what: 'the delivery to be dead', timeoutMs: 60_000 },
  );
  expect(dead).toMatchObject({ dead_reason: 'rejected', attempts: [{ status_code: 422 }] });
  const inDlq = await waitFor(
    async () => (await webhookDlqBodies()).find((body) => body.delivery_id === dead.id),
    { what: 'the message in the webhook-delivery DLQ', timeoutMs: 30_000, intervalMs: 500 },
  );
  expect(inDlq).toMatchObject({ type: 'webhook.attempt', workspace_id: tenant.workspaceId, attempt: 1 });
  await waitForHandled(await readQuiescence(), {});
  expect(rejecting.requests).toHaveLength(1);
}, 120_000);
