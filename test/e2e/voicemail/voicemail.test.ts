import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { readCall as getCall } from '../../../functions/calling/lifecycle.js';
import { getCallRecord } from '../../../functions/post-call/pipeline.js';
import { postProviderForm } from '../../helpers/provider.js';
import { api, type Json } from '../../helpers/http.js';
import { stackState } from '../../helpers/stack-state.js';
import { waitFor } from '../../helpers/wait.js';
import { readyToCall, waitForCall, ws, type Tenant } from '../calling/fixtures.js';

/**
 * Voicemail: answering-machine detection of outbound calls through the telephony simulator's scenario
 * numbers (+61491570117 a machine with a beep, +61491570118 a person after 2 s of silence), what the
 * call, its post-call record and `outbox/telephony.jsonl` keep, and the AMD callback's faults
 * (unsigned, unknown call, twice, late).
 */

const MACHINE = '+61491570117';
const HUMAN_AFTER_SILENCE = '+61491570118';
const MESSAGE =
  'Hi {{name}}, this is Ava from Harbour Realty. Please call us back about {{listing_address}}.';
const FILLED = 'Hi Sam, this is Ava from Harbour Realty. Please call us back about 12 Harbour St.';

const outboxPath = () => join(stackState().env.LOCAL_STATE_DIR, 'outbox', 'telephony.jsonl');
const outbox = (): Json[] =>
  existsSync(outboxPath())
    ? readFileSync(outboxPath(), 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as Json)
    : [];

async function startCall(tenant: Tenant, agentId: string, to: string): Promise<string> {
  const res = await api('POST', `${ws(tenant)}/agents/${agentId}/start-call`, {
    token: tenant.owner.token,
    body: { to_phone: to, parameters: { name: 'Sam', listing_address: '12 Harbour St' } },
  });
  expect(res.status).toBe(201);
  return res.body.id as string;
}

/** Ended and handed to the post-call pipeline. */
async function settled(tenant: Tenant, callId: string): Promise<Json> {
  await waitForCall(tenant, callId, (c) => ['completed', 'failed'].includes(c.status), 40_000);
  let last: unknown;
  await waitFor(
    async () => {
      const stored = await getCall(tenant.workspaceId, callId);
      last = { ...stored, prompt: undefined, greeting: undefined };
      return stored?.postCallSentAt;
    },
    {
      what: () => `call ${callId} reported to the post-call pipeline: ${JSON.stringify(last)}`,
      timeoutMs: 20_000,
    },
  );
  return (await api('GET', `${ws(tenant)}/calls/${callId}`, { token: tenant.owner.token })).body;
}

function amdUrl(workspaceId: string, callId: string): string {
  return `${stackState().env.WEBHOOKS_BASE_URL}/webhooks/telephony/amd?call_id=${callId}&workspace_id=${workspaceId}`;
}

async function postAmd(url: string, params: Record<string, string>, signed = true): Promise<number> {
  return (await postProviderForm(url, params, signed)).status;
}

describe('agent voicemail settings', () => {
  let tenant: Tenant;
  let agentId: string;
  beforeAll(async () => {
    const ready = await readyToCall({ name: 'VM settings' });
    tenant = ready.tenant;
    agentId = ready.agent.id as string;
  });

  test('leave_message without a message, a message over 1,000, a bad transfer number, warm without a number: 422, nothing changed', async () => {
    const path = `${ws(tenant)}/agents/${agentId}`;
    const bodies = [
      { voicemail: { action: 'leave_message' } },
      { voicemail: { action: 'leave_message', message: 'x'.repeat(1001) } },
      { transfer: { phone_number: '0291234567', mode: 'cold' } },
      { transfer: { mode: 'warm' } },
    ];
    for (const body of bodies) {
      const res = await api('PATCH', path, { token: tenant.owner.token, body });
      expect(res.status).toBe(422);
    }
    const created = await api('POST', `${ws(tenant)}/agents`, {
      token: tenant.owner.token,
      body: { name: 'Bad', voicemail: { action: 'leave_message' } },
    });
    expect(created.status).toBe(422);
    const agent = (await api('GET', path, { token: tenant.owner.token })).body;
    expect(agent.voicemail).toBeNull();
    expect(agent.transfer).toBeNull();
  });

  test('defaults: detection true, action hangup; null removes it', async () => {
    const path = `${ws(tenant)}/agents/${agentId}`;
    const set = await api('PATCH', path, { token: tenant.owner.token, body: { voicemail: {} } });
    expect(set.status).toBe(200);
    expect(set.body.voicemail).toEqual({ detection: true, action: 'hangup', message: null });
    const removed = await api('PATCH', path, { token: tenant.owner.token, body: { voicemail: null } });
    expect(removed.body.voicemail).toBeNull();
  });
});

describe('a machine answers (+61491570117)', () => {
  test('leave_message: the agent stops, the message is said after the beep and kept by the machine; the call completes as voicemail', async () => {
    const { tenant, agent } = await readyToCall({
      name: 'VM leave',
      greeting: 'Hi {{name}}, this is Ava.',
      voicemail: { action: 'leave_message', message: MESSAGE },
    });
    expect(agent.voicemail).toEqual({ detection: true, action: 'leave_message', message: MESSAGE });
    const callId = await startCall(tenant, agent.id, MACHINE);
    const call = await settled(tenant, callId);
    expect(call).toMatchObject({
      status: 'completed',
      end_reason: 'voicemail',
      answered_by: 'machine',
      voicemail_message_left: true,
    });
    // Billed for what the line was held: the greeting to the beep (4 s), the service's stop (real
    // seconds, not the simulator's scaled ones) and the 15-word message (6 s) — never a conversation's.
    expect(call.duration_seconds).toBeGreaterThanOrEqual(4 + 1 + 6);
    expect(call.duration_seconds).toBeLessThanOrEqual(4 + 8 + 6);
    // 20 credits a minute, a started second billed.
    await waitFor(
      async () =>
        (await api('GET', `${ws(tenant)}/calls/${callId}`, { token: tenant.owner.token })).body.credits !==
        null
          ? true
          : undefined,
      { what: 'the call charged', timeoutMs: 20_000 },
    );
    const charged = (await api('GET', `${ws(tenant)}/calls/${callId}`, { token: tenant.owner.token })).body;
    expect(charged.credits).toBeCloseTo((charged.duration_seconds * 20) / 60, 2);
    // The message is the agent's last turn.
    expect(call.transcript.at(-1)).toMatchObject({ role: 'agent', text: FILLED });
    expect(call.transcript.filter((t: Json) => t.text === FILLED)).toHaveLength(1);
    // The machine kept it: once, under the call's provider id.
    const kept = outbox().filter((l) => l.provider_call_id === call.provider_call_id);
    expect(kept).toEqual([expect.objectContaining({ kind: 'voicemail', text: FILLED })]);
    // The post-call record says so too.
    const record = await waitFor(() => getCallRecord(tenant.workspaceId, callId), {
      what: 'the post-call record',
      timeoutMs: 20_000,
    });
    expect(record).toMatchObject({
      end_reason: 'voicemail',
      answered_by: 'machine',
      voicemail_message_left: true,
    });
    expect(record.transcript.at(-1)).toMatchObject({ role: 'agent', text: FILLED });

    // A duplicate or late AMD result changes nothing (200).
    const url = amdUrl(tenant.workspaceId, callId);
    const params = { CallSid: call.provider_call_id as string, AnsweredBy: 'human' };
    expect(await postAmd(url, params)).toBe(200);
    const after = (await api('GET', `${ws(tenant)}/calls/${callId}`, { token: tenant.owner.token })).body;
    expect(after).toMatchObject({
      answered_by: 'machine',
      end_reason: 'voicemail',
      voicemail_message_left: true,
    });
  }, 90_000);

  test('hangup: nothing is left; the call completes as voicemail', async () => {
    const { tenant, agent } = await readyToCall({ name: 'VM hangup', voicemail: { action: 'hangup' } });
    const callId = await startCall(tenant, agent.id, MACHINE);
    const call = await settled(tenant, callId);
    expect(call).toMatchObject({
      end_reason: 'voicemail',
      answered_by: 'machine',
      voicemail_message_left: false,
    });
    expect(outbox().filter((l) => l.provider_call_id === call.provider_call_id)).toEqual([]);

    // The call log filters by how a call ended, its channel, who answered and the agent's version.
    const ids = async (query: string) => {
      const res = await api('GET', `${ws(tenant)}/calls?${query}`, { token: tenant.owner.token });
      expect(res.status).toBe(200);
      return (res.body.items as Json[]).map((c) => c.id);
    };
    expect(await ids('end_reason=voicemail&answered_by=machine&channel=phone&agent_version=1')).toEqual([
      callId,
    ]);
    expect(
      (await api('GET', `${ws(tenant)}/calls`, { token: tenant.owner.token })).body.items[0],
    ).toMatchObject({ id: callId, answered_by: 'machine', end_reason: 'voicemail', agent_version: 1 });
    expect(await ids('end_reason=busy')).toEqual([]);
    expect(await ids('answered_by=human')).toEqual([]);
    expect(await ids('channel=web')).toEqual([]);
    expect(await ids('agent_version=2')).toEqual([]);
    const bad = await api('GET', `${ws(tenant)}/calls?end_reason=bored`, { token: tenant.owner.token });
    expect(bad.status).toBe(422);
  }, 90_000);

  test('an agent without voicemail is not checked: the call is not marked', async () => {
    const { tenant, agent } = await readyToCall({ name: 'VM none' });
    const callId = await startCall(tenant, agent.id, MACHINE);
    const call = await settled(tenant, callId);
    expect(call.answered_by).toBe('unknown');
    expect(call.end_reason).not.toBe('voicemail');
    expect(call.voicemail_message_left).toBe(false);
  }, 90_000);
});

test('a person answers after 2 s of silence (+61491570118): human, a normal conversation', async () => {
  const { tenant, agent } = await readyToCall({
    name: 'VM human',
    voicemail: { action: 'leave_message', message: MESSAGE },
  });
  const callId = await startCall(tenant, agent.id, HUMAN_AFTER_SILENCE);
  const call = await settled(tenant, callId);
  expect(call).toMatchObject({
    status: 'completed',
    end_reason: 'agent_hangup',
    answered_by: 'human',
    voicemail_message_left: false,
  });
  expect(call.transcript.some((t: Json) => t.role === 'user')).toBe(true);
  expect(call.transcript.some((t: Json) => t.text === FILLED)).toBe(false);
}, 90_000);

describe('the AMD callback', () => {
  let tenant: Tenant;
  let callId: string;
  beforeAll(async () => {
    const ready = await readyToCall({ name: 'VM faults', voicemail: { action: 'hangup' } });
    tenant = ready.tenant;
    // The first human result is the simulator's; the call goes on.
    callId = await startCall(tenant, ready.agent.id, HUMAN_AFTER_SILENCE);
    await waitForCall(tenant, callId, (c) => c.answered_by === 'human', 20_000);
  }, 60_000);

  test('unsigned: 401, nothing changes', async () => {
    const stored = await getCall(tenant.workspaceId, callId);
    const url = amdUrl(tenant.workspaceId, callId);
    expect(
      await postAmd(url, { CallSid: stored!.providerCallId!, AnsweredBy: 'machine_end_beep' }, false),
    ).toBe(401);
    expect((await getCall(tenant.workspaceId, callId))?.answeredBy).toBe('human');
  });

  test('twice, or a machine after the human: the first result stands (200)', async () => {
    const stored = await getCall(tenant.workspaceId, callId);
    const url = amdUrl(tenant.workspaceId, callId);
    expect(await postAmd(url, { CallSid: stored!.providerCallId!, AnsweredBy: 'machine_end_beep' })).toBe(
      200,
    );
    expect(await postAmd(url, { CallSid: stored!.providerCallId!, AnsweredBy: 'human' })).toBe(200);
    const call = await settled(tenant, callId);
    expect(call.answered_by).toBe('human');
    expect(call.end_reason).not.toBe('voicemail');
  }, 60_000);

  test('an unknown call, or another provider call: 200, nothing changes', async () => {
    const unknown = amdUrl(tenant.workspaceId, 'call_01HZZZZZZZZZZZZZZZZZZZZZZZ');
    expect(await postAmd(unknown, { CallSid: 'CAunknown', AnsweredBy: 'machine_end_beep' })).toBe(200);
    const other = amdUrl(tenant.workspaceId, callId);
    expect(await postAmd(other, { CallSid: 'CAother', AnsweredBy: 'machine_end_beep' })).toBe(200);
    expect((await getCall(tenant.workspaceId, callId))?.answeredBy).toBe('human');
  });
});

describe('transfer', () => {
  test('`transfer` (cold) is stored and read back (warm transfers: test/e2e/transfer)', async () => {
    const { agent } = await readyToCall({
      name: 'Transfer cold',
      transfer: { phone_number: '+61291234567' },
    });
    expect(agent.transfer).toEqual({ phone_number: '+61291234567', mode: 'cold', whisper: null });
  });
});
