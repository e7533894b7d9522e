import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { TRANSFER_FAILED_LINE } from '../../../functions/calling/transfer.js';
import { readCall as getCall } from '../../../functions/calling/lifecycle.js';
import { getCallRecord } from '../../../functions/post-call/pipeline.js';
import { postProviderForm } from '../../helpers/provider.js';
import { readStackState } from '../../../lib/local/state.js';
import { receiveCall } from '../../../lib/tools/cli/call.js';
import { api, type Json } from '../../helpers/http.js';
import { stackState } from '../../helpers/stack-state.js';
import { waitFor, waitForQuiescence } from '../../helpers/wait.js';
import { newTenant, readyToCall, waitForCall, ws, type Tenant } from '../calling/fixtures.js';
import { liveCall, modelRequests, openSession } from '../conversation/fixtures.js';

/**
 * Transfers through the telephony simulator: the agent's `transfer_call` (the model simulator calls
 * it when the caller asks for a person), cold (`<Dial>` the number) and warm (a summary written by the
 * model before the session ends, whispered to the person at +61491570119 — the simulator keeps what
 * they heard in outbox/telephony.jsonl — then `<Dial action>` records how the dial ended; busy
 * +61491570110 and no answer +61491570111 end the call as transfer_failed). The whisper and
 * transfer-status webhooks' faults: unsigned, unknown call, another provider call, twice.
 */

const TARGET = '+61491570119';
const BUSY = '+61491570110';
const NO_ANSWER = '+61491570111';
const CALLER = '+61491570150';
const ASK = 'Can I speak to a person, please?';
const QUESTION = 'I am calling about the house on Harbour Street.';

const outboxPath = () => join(stackState().env.LOCAL_STATE_DIR, 'outbox', 'telephony.jsonl');
const heard = (providerCallId: string): Json[] =>
  existsSync(outboxPath())
    ? readFileSync(outboxPath(), 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as Json)
        .filter((line) => line.provider_call_id === providerCallId)
    : [];

const detail = async (tenant: Tenant, callId: string): Promise<Json> =>
  (await api('GET', `${ws(tenant)}/calls/${callId}`, { token: tenant.owner.token })).body;

/** The simulator's view of a call (what it dialled, said, and how the transfer's dial went). */
async function simulatorCall(providerCallId: string): Promise<Json> {
  const { env } = stackState();
  const res = await fetch(`${env.TELEPHONY_SIMULATOR_URL}/calls/${providerCallId}`, {
    headers: { authorization: `Bearer ${env.TELEPHONY_AUTH_TOKEN}` },
  });
  return (await res.json()) as Json;
}

/** An inbound call whose simulated caller says `says` (then goodbye); its call id. */
async function callIn(number: Json, says: string[]): Promise<string> {
  const received = await receiveCall(readStackState()!, { from: CALLER, to: number.phone_number, says });
  expect(received.accepted).toBe(true);
  return received.call_id as string;
}

/** Ended and handed to the post-call pipeline; the call detail then. */
async function settled(tenant: Tenant, callId: string): Promise<Json> {
  await waitForCall(tenant, callId, (c) => ['completed', 'failed'].includes(c.status), 60_000);
  await waitFor(async () => (await getCall(tenant.workspaceId, callId))?.postCallSentAt, {
    what: `call ${callId} reported to the post-call pipeline`,
    timeoutMs: 20_000,
  });
  return detail(tenant, callId);
}

const webhookUrl = (path: string, workspaceId: string, callId: string) =>
  `${stackState().env.WEBHOOKS_BASE_URL}/webhooks/telephony/${path}?call_id=${callId}&workspace_id=${workspaceId}`;

async function post(
  url: string,
  params: Record<string, string>,
  signed = true,
): Promise<{ status: number; text: string }> {
  const res = await postProviderForm(url, params, signed);
  return { status: res.status, text: await res.text() };
}

const summaryRequests = async () =>
  (await modelRequests()).filter(
    (r) =>
      (r as { response_format?: { json_schema?: { name?: string } } }).response_format?.json_schema?.name ===
      'transfer_summary',
  );

describe('the agent’s transfer setting', () => {
  test('warm is stored and read back; a warm transfer without a number, a number not E.164, a whisper over 500: 422, nothing changed', async () => {
    const { tenant, agent } = await readyToCall({ name: 'Transfer settings' });
    const path = `${ws(tenant)}/agents/${agent.id}`;
    const warm = { phone_number: TARGET, mode: 'warm', whisper: 'Call from Harbour Realty: {{summary}}' };
    const set = await api('PATCH', path, { token: tenant.owner.token, body: { transfer: warm } });
    expect(set.status).toBe(200);
    expect(set.body.transfer).toEqual(warm);
    for (const transfer of [
      { mode: 'warm' },
      { phone_number: '0291234567', mode: 'warm' },
      { phone_number: TARGET, mode: 'warm', whisper: 'x'.repeat(501) },
    ]) {
      const res = await api('PATCH', path, { token: tenant.owner.token, body: { transfer } });
      expect(res.status).toBe(422);
    }
    const created = await api('POST', `${ws(tenant)}/agents`, {
      token: tenant.owner.token,
      body: { name: 'Bad warm', transfer: { mode: 'warm' } },
    });
    expect(created.status).toBe(422);
    const after = (await api('GET', path, { token: tenant.owner.token })).body;
    expect(after.transfer).toEqual(warm);
    expect(after.version).toBe(set.body.version);
  });
});

test('cold still works: the caller asks for a person, the number is dialled with nothing whispered', async () => {
  const { tenant, number } = await readyToCall({
    name: 'Cold transfer',
    transfer: { phone_number: TARGET, mode: 'cold' },
  });
  const callId = await callIn(number, [ASK]);
  const call = await settled(tenant, callId);
  expect(call).toMatchObject({
    status: 'completed',
    transferred_to: TARGET,
    conversation_ended_by: 'transfer',
    transfer: { mode: 'cold', to: TARGET, summary: null, status: null },
  });
  expect(call.end_reason).not.toBe('transfer_failed');
  const simulated = await simulatorCall(call.provider_call_id);
  expect(simulated.dialled).toBe(TARGET);
  expect(simulated.transfer).toBeNull(); // a plain <Dial>: no whisper, no dial action
  expect(heard(call.provider_call_id)).toEqual([]);
}, 120_000);

test('warm through the simulator: the summary is stored before the dial, the person hears the whisper first, connected', async () => {
  const { tenant, number } = await readyToCall({
    name: 'Warm transfer',
    transfer: { phone_number: TARGET, mode: 'warm', whisper: 'Call from Harbour Realty. {{summary}}' },
  });
  const before = (await summaryRequests()).length;
  const callId = await callIn(number, [QUESTION, ASK]);
  const call = await settled(tenant, callId);
  const summary = `On this call the caller said: "${QUESTION}" and "${ASK}".`;
  expect(call).toMatchObject({
    status: 'completed',
    end_reason: 'completed',
    conversation_ended_by: 'transfer',
    transferred_to: TARGET,
    transfer: { mode: 'warm', to: TARGET, summary, status: 'connected' },
  });
  expect(summary.split(' ').length).toBeLessThanOrEqual(60);
  // The model was asked once for it.
  await waitForQuiescence();
  expect((await summaryRequests()).length - before).toBe(1);
  // The person heard the whisper, once, kept under the caller's call (not the new leg).
  const whisper = `Call from Harbour Realty. ${summary}`;
  expect(heard(call.provider_call_id)).toEqual([
    { at: expect.any(String), provider_call_id: call.provider_call_id, kind: 'whisper', text: whisper },
  ]);
  const simulated = await simulatorCall(call.provider_call_id);
  expect(simulated.transfer).toEqual({ to: TARGET, status: 'completed', whisper });
  expect(simulated.dialled).toBe(TARGET);
  // The post-call payload carries the transfer.
  const record = await waitFor(() => getCallRecord(tenant.workspaceId, callId), {
    what: 'the post-call record',
    timeoutMs: 20_000,
  });
  expect(record.transfer).toEqual({ mode: 'warm', to: TARGET, summary, status: 'connected' });
}, 120_000);

test('warm to a busy number, or one that does not answer: the caller hears one short line, the call ends transfer_failed', async () => {
  const outcomes = await Promise.all(
    [
      { to: BUSY, status: 'busy' },
      { to: NO_ANSWER, status: 'no_answer' },
    ].map(async ({ to, status }) => {
      const { tenant, number } = await readyToCall({
        name: `Warm ${status}`,
        transfer: { phone_number: to, mode: 'warm' },
      });
      const callId = await callIn(number, [ASK]);
      return { tenant, callId, to, status, call: await settled(tenant, callId) };
    }),
  );
  for (const { call, to, status } of outcomes) {
    expect(call).toMatchObject({
      status: 'completed',
      end_reason: 'transfer_failed',
      transfer: { mode: 'warm', to, status },
    });
    expect(call.transfer.summary).toEqual(expect.any(String));
    // The caller heard the one line, once; nobody heard a whisper, nobody was connected.
    const simulated = await simulatorCall(call.provider_call_id);
    expect(simulated.said).toEqual([TRANSFER_FAILED_LINE]);
    expect(simulated.transfer).toEqual({ to, status: status === 'busy' ? 'busy' : 'no-answer' });
    expect(simulated.dialled).toBeNull();
    expect(heard(call.provider_call_id)).toEqual([]);
  }
  const { tenant, callId } = outcomes[0];
  const record = await waitFor(() => getCallRecord(tenant.workspaceId, callId), {
    what: 'the post-call record',
    timeoutMs: 20_000,
  });
  expect(record).toMatchObject({ end_reason: 'transfer_failed', transfer: { status: 'busy' } });
}, 150_000);

test('the summary request fails: the fallback line from the transcript is whispered, and the call is still transferred', async () => {
  const { tenant, number } = await readyToCall({
    name: 'Warm fallback',
    transfer: { phone_number: TARGET, mode: 'warm' },
  });
  const failing = 'Please simulate a summary error.';
  const callId = await callIn(number, [failing, ASK]);
  const call = await settled(tenant, callId);
  const fallback = `A caller is being transferred to you. They said: "${failing} ${ASK}"`;
  expect(call).toMatchObject({
    status: 'completed',
    end_reason: 'completed',
    transfer: { mode: 'warm', to: TARGET, summary: fallback, status: 'connected' },
  });
  expect(heard(call.provider_call_id)).toEqual([
    expect.objectContaining({ kind: 'whisper', text: fallback }),
  ]);
}, 120_000);

describe('the whisper and transfer-status webhooks', () => {
  let tenant: Tenant;
  let call: { callId: string; providerCallId: string; workspaceId: string };
  let summary: string;
  beforeAll(async () => {
    // A live call whose relay session the test plays; the caller asks for a person.
    const ready = await readyToCall({
      name: 'Warm webhooks',
      greeting: 'Hi {{name}}, this is Ava.',
      transfer: { phone_number: TARGET, mode: 'warm', whisper: 'For {{name}}: {{summary}}' },
    });
    tenant = ready.tenant;
    call = await liveCall(tenant, ready.agent.id, { name: 'Sam' });
    const relay = await openSession(call);
    expect((await relay.say(ASK)).reply).toBe('Let me transfer you now.');
    const end = await relay.until((frames) => frames.find((f) => f.type === 'end'), 'the end frame');
    expect(JSON.parse(end.handoffData as string)).toEqual({
      reason: 'transfer',
      transfer_to: TARGET,
      mode: 'warm',
    });
    relay.close();
    // Stored before the session's end.
    const stored = await getCall(tenant.workspaceId, call.callId);
    expect(stored?.transfer).toMatchObject({ mode: 'warm', to: TARGET });
    summary = stored!.transfer!.summary!;
    expect(summary).toBe(`On this call the caller said: "${ASK}".`);
  }, 60_000);

  afterAll(async () => {
    // Hung up by the last test; if it did not get there, the call is not left playing.
    if (!call) return;
    await api('POST', `${ws(tenant)}/calls/${call.callId}/hangup`, { token: tenant.owner.token });
    await waitForCall(tenant, call.callId, (c) => c.status === 'completed', 30_000);
  }, 40_000);

  test('the <Connect action> dials with the whisper first and the dial’s end reported', async () => {
    const url = webhookUrl('relay-ended', call.workspaceId, call.callId);
    const answer = await post(url, { CallSid: call.providerCallId });
    expect(answer.status).toBe(200);
    const whisperUrl = webhookUrl('whisper', call.workspaceId, call.callId).replace(/&/g, '&amp;');
    const statusUrl = webhookUrl('transfer-status', call.workspaceId, call.callId).replace(/&/g, '&amp;');
    expect(answer.text).toContain(
      `<Dial action="${statusUrl}"><Number url="${whisperUrl}">${TARGET}</Number></Dial>`,
    );
  });

  test('whisper: matched by ParentCallSid and the call id; parameters filled; twice the same, nothing changes', async () => {
    const url = webhookUrl('whisper', call.workspaceId, call.callId);
    const leg = { CallSid: 'CAnewleg0000000000000000000000000', ParentCallSid: call.providerCallId };
    const first = await post(url, leg);
    const second = await post(url, leg);
    expect(first.status).toBe(200);
    expect(first.text).toContain(`>For Sam: ${summary.replace(/"/g, '&quot;')}</Say>`);
    expect(second).toEqual(first);
    // Its own CallSid is never the match: the caller's call id as CallSid, no ParentCallSid → nothing said.
    const own = await post(url, { CallSid: call.providerCallId });
    expect(own.status).toBe(200);
    expect(own.text).not.toContain('<Say');
    const other = await post(url, { CallSid: 'CAleg', ParentCallSid: 'CAanother' });
    expect(other.text).not.toContain('<Say');
    expect((await getCall(tenant.workspaceId, call.callId))?.transfer?.status).toBeUndefined();
  });

  test('unsigned: 401 and nothing changes; an unknown call, or the call under another workspace: 200 and nothing changes', async () => {
    const whisper = webhookUrl('whisper', call.workspaceId, call.callId);
    const status = webhookUrl('transfer-status', call.workspaceId, call.callId);
    expect(
      (await post(whisper, { CallSid: 'CAleg', ParentCallSid: call.providerCallId }, false)).status,
    ).toBe(401);
    expect((await post(status, { CallSid: call.providerCallId, DialCallStatus: 'busy' }, false)).status).toBe(
      401,
    );
    const unknownId = 'call_01HZZZZZZZZZZZZZZZZZZZZZZZ';
    for (const path of ['whisper', 'transfer-status']) {
      const res = await post(webhookUrl(path, call.workspaceId, unknownId), {
        CallSid: call.providerCallId,
        ParentCallSid: call.providerCallId,
        DialCallStatus: 'busy',
      });
      expect(res.status).toBe(200);
      expect(res.text).not.toContain('<Say');
    }
    // The call's id under another workspace (another tenant's): unknown there, nothing changes.
    const other = await newTenant();
    for (const path of ['whisper', 'transfer-status']) {
      const res = await post(webhookUrl(path, other.workspaceId, call.callId), {
        CallSid: call.providerCallId,
        ParentCallSid: call.providerCallId,
        DialCallStatus: 'busy',
      });
      expect(res.status).toBe(200);
      expect(res.text).not.toContain('<Say');
    }
    // Another provider call's dial end changes nothing either.
    expect((await post(status, { CallSid: 'CAanother', DialCallStatus: 'busy' })).status).toBe(200);
    const stored = await getCall(tenant.workspaceId, call.callId);
    expect(stored?.transfer?.status).toBeUndefined();
    expect(stored?.status).toBe('inprogress');
  });

  test('transfer-status: recorded once; the caller hears the one line; a second or different report changes nothing', async () => {
    const url = webhookUrl('transfer-status', call.workspaceId, call.callId);
    // Twice at once (a provider retry racing the original): one write, the same answer.
    const [first, racing] = await Promise.all([
      post(url, { CallSid: call.providerCallId, DialCallStatus: 'busy' }),
      post(url, { CallSid: call.providerCallId, DialCallStatus: 'busy' }),
    ]);
    expect(first.status).toBe(200);
    expect(first.text).toContain(`${TRANSFER_FAILED_LINE.replace(/'/g, '&apos;')}</Say><Hangup/>`);
    expect(racing).toEqual(first);
    const again = await post(url, { CallSid: call.providerCallId, DialCallStatus: 'busy' });
    expect(again).toEqual(first);
    const late = await post(url, { CallSid: call.providerCallId, DialCallStatus: 'completed' });
    expect(late).toEqual(first);
    expect((await getCall(tenant.workspaceId, call.callId))?.transfer?.status).toBe('busy');
    // After the dial ended, a whisper is no longer said.
    const whisper = await post(webhookUrl('whisper', call.workspaceId, call.callId), {
      CallSid: 'CAleg',
      ParentCallSid: call.providerCallId,
    });
    expect(whisper.text).not.toContain('<Say');
    // The call then ends as a failed transfer.
    await api('POST', `${ws(tenant)}/calls/${call.callId}/hangup`, { token: tenant.owner.token });
    const ended = await waitForCall(tenant, call.callId, (c) => c.status === 'completed', 30_000);
    expect(ended.end_reason).toBe('transfer_failed');
    expect(ended.transfer).toEqual({ mode: 'warm', to: TARGET, summary, status: 'busy' });
    // Ended: a report now changes nothing.
    expect((await post(url, { CallSid: call.providerCallId, DialCallStatus: 'completed' })).status).toBe(200);
    expect((await getCall(tenant.workspaceId, call.callId))?.transfer?.status).toBe('busy');
  }, 60_000);
});
