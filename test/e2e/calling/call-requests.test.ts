import { LedgerEntryEntity } from '../../../functions/billing/entities.js';
import { CallStatusEventEntity } from '../../../functions/calling/entities.js';
import { getCall } from '../../../functions/calling/service.js';
import { api, type Json } from '../../helpers/http.js';
import { postProviderForm } from '../../helpers/provider.js';
import { stackState } from '../../helpers/stack-state.js';
import { waitFor, waitForQuiescence } from '../../helpers/wait.js';
import {
  apiKey,
  readyToCall,
  TEST_NUMBERS,
  waitForCall,
  workspaceRecord,
  ws,
  type Tenant,
} from './fixtures.js';
import { requestsBetween, stackCounters, type StackCounters } from '../../helpers/metrics.js';

/**
 * What one answered, recorded outbound call asks of DynamoDB in the calling domain's own functions —
 * the dispatcher (`DispatchCalls`) and the provider's status and recording callbacks
 * (`TelephonyVoiceWebhook`) — counted by the local stack (GET /_local/metrics, per catalog function)
 * between two quiescent points, beside what the call must still come to: every status once and in
 * order, one charge, the slot back, one post-call message. A change that reads or writes again
 * breaks the numbers.
 *
 *   DispatchCalls: the claim (UpdateItem, ALL_NEW: what the dial needs is on the call), then the
 *     provider's id with `initiated` and its status event (TransactWriteItems) — 2, from 5.
 *   TelephonyVoiceWebhook: the answer and the voice runtime's `started`, one conditioned transaction
 *     each, reading nothing; the end: a read, its transaction (status, event, slot), the charge with
 *     the call counted (one ledger transaction), billing's consistent read of the account (agents
 *     switched off when credits ran out); the recording: a read, its transaction, the post-call
 *     transaction (`postCallSentAt`, the open-call marker) — 9, from 18.
 */

/** Messages sent to the post-call queue (named `post-call`, with the stack's prefix). */
const postCallMessages = (m: StackCounters) =>
  Object.entries(m.queue_messages_sent)
    .filter(([queue]) => queue === 'post-call' || queue.endsWith('-post-call'))
    .reduce((sum, [, n]) => sum + n, 0);

let tenant: Tenant;
let agent: Json;
let key: string;

beforeAll(async () => {
  ({ tenant, agent } = await readyToCall());
  ({ key } = await apiKey(tenant, ['start_call', 'calls:read']));
});

test('an answered, recorded call: dispatched in 2 DynamoDB requests, its callbacks in 9', async () => {
  await waitForQuiescence();
  const before = await stackCounters();
  const res = await api('POST', `${ws(tenant)}/agents/${agent.id}/start-call`, {
    token: key,
    body: { to_phone: TEST_NUMBERS.answered, parameters: { name: 'Sam', agency: 'Harbour Realty' } },
  });
  expect(res.status).toBe(201);
  const callId = res.body.id as string;
  await waitForCall(tenant, callId, (c) => c.status === 'completed' && c.recording !== null);
  await waitFor(async () => (await getCall(tenant.workspaceId, callId))?.postCallSentAt, {
    what: 'the call to be reported to the post-call pipeline',
  });
  await waitForQuiescence();
  const after = await stackCounters();

  // What the call came to, once each.
  const call = (await api('GET', `${ws(tenant)}/calls/${callId}`, { token: key })).body;
  expect(call.status_history.map((e: Json) => e.status)).toEqual([
    'created',
    'initiated',
    'connected',
    'inprogress',
    'completed',
  ]);
  expect(call).toMatchObject({ status: 'completed', duration_seconds: 60, credits: 20 });
  const { data: ledger } = await LedgerEntryEntity.query
    .byOrganisation({ organisationId: tenant.organisationId })
    .go({ pages: 'all', consistent: true });
  expect(ledger.filter((entry) => entry.sourceKey.startsWith(`${callId}:`))).toHaveLength(1);
  expect((await workspaceRecord(tenant.workspaceId))?.activeCalls).toBe(0);
  expect(postCallMessages(after) - postCallMessages(before)).toBe(1);

  // And what it cost the calling domain's functions. The end's callbacks race the relay's end and each
  // other, as Twilio's do: a write that met a concurrent one is counted (CallWriteConflicts) and tried
  // again, at most a read and a transaction more each.
  const conflicts = writeConflicts(after) - writeConflicts(before);
  expect(conflicts).toBeLessThanOrEqual(2);
  expect(requestsBetween(before, after, 'DispatchCalls')).toEqual({ UpdateItem: 1, TransactWriteItems: 1 });
  const callbacks = requestsBetween(before, after, 'TelephonyVoiceWebhook');
  expect(Object.keys(callbacks).sort()).toEqual(['GetItem', 'TransactWriteItems']);
  expect(callbacks.TransactWriteItems - 6).toBeGreaterThanOrEqual(0);
  expect(callbacks.TransactWriteItems - 6).toBeLessThanOrEqual(conflicts);
  expect(callbacks.GetItem - 3).toBeGreaterThanOrEqual(0);
  expect(callbacks.GetItem - 3).toBeLessThanOrEqual(conflicts);
});

const writeConflicts = (m: StackCounters): number => m.service_metrics.CallWriteConflicts?.count ?? 0;

/** A status callback as the provider posts it, signed, to our voice webhook. */
async function postStatus(query: Record<string, string>, params: Record<string, string>): Promise<Response> {
  const search = new URLSearchParams(query).toString();
  const url = `${stackState().env.WEBHOOKS_BASE_URL}/webhooks/telephony/voice${search ? `?${search}` : ''}`;
  return postProviderForm(url, params);
}

test('a forward callback read-free: an unknown call, another provider call, a late answer change nothing', async () => {
  const res = await api('POST', `${ws(tenant)}/agents/${agent.id}/start-call`, {
    token: key,
    body: { to_phone: TEST_NUMBERS.answered, record: false },
  });
  expect(res.status).toBe(201);
  const callId = res.body.id as string;
  await waitFor(async () => (await getCall(tenant.workspaceId, callId))?.postCallSentAt, {
    what: 'the call to end and be reported to the post-call pipeline',
  });
  await waitForQuiescence();
  const ended = await getCall(tenant.workspaceId, callId);
  const unknownCall = 'call_01HZZZZZZZZZZZZZZZZZZZZZZZ';
  const answered = (callSid: string) => ({
    CallSid: callSid,
    CallStatus: 'in-progress',
    Timestamp: new Date().toISOString(),
  });

  const before = await stackCounters();
  // An unknown call (ids of the right shape): 200, as before, and no status of it exists.
  const unknown = await postStatus(
    { call_id: unknownCall, workspace_id: tenant.workspaceId },
    answered('CAunknown'),
  );
  expect(unknown.status).toBe(200);
  // Another provider call's answer for a real call; the call's own answer, late (it has ended).
  const query = { call_id: callId, workspace_id: tenant.workspaceId };
  expect((await postStatus(query, answered('CAother'))).status).toBe(200);
  expect((await postStatus(query, answered(ended!.providerCallId!))).status).toBe(200);
  // Unknown to the provider's link (an inbound call's callback names no call): 200.
  expect((await postStatus({}, answered('CAnolink'))).status).toBe(200);
  await waitForQuiescence();
  const after = await stackCounters();

  const { data: events } = await CallStatusEventEntity.query.byCall({ callId: unknownCall }).go();
  expect(events).toEqual([]);
  const now = await getCall(tenant.workspaceId, callId);
  expect(now).toEqual(ended);
  const call = (await api('GET', `${ws(tenant)}/calls/${callId}`, { token: key })).body;
  expect(call.status_history.map((e: Json) => e.status)).toEqual([
    'created',
    'initiated',
    'connected',
    'inprogress',
    'completed',
  ]);
  // Each forward callback is one conditioned transaction, refused here (billed as a write, once);
  // the one without a call id reads the provider's link and finds none.
  expect(requestsBetween(before, after, 'TelephonyVoiceWebhook')).toEqual({
    TransactWriteItems: 3,
    GetItem: 1,
  });
});
