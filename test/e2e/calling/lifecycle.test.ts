import { LedgerEntryEntity } from '../../../functions/billing/entities.js';
import { getCall } from '../../../functions/calling/service.js';
import { describeWav } from '../../../lib/local/simulators/telephony/wav.js';
import { api, type Json, withoutPostCallAnalysis } from '../../helpers/http.js';
import { stackState } from '../../helpers/stack-state.js';
import { waitFor, waitForQuiescence } from '../../helpers/wait.js';
import {
  addMember,
  apiKey,
  readyToCall,
  TEST_NUMBERS,
  waitForCall,
  workspaceRecord,
  ws,
  type Tenant,
} from './fixtures.js';

/**
 * The call lifecycle end to end: HTTP start-call → table → `calls` queue → dispatcher → telephony
 * simulator → signed callbacks on /webhooks/telephony/voice → call log, recording, charge, post-call.
 */

let tenant: Tenant;
let agent: Json;
let number: Json;
let key: string;

beforeAll(async () => {
  ({ tenant, agent, number } = await readyToCall({
    prompt:
      'You are Ava from Harbour Realty. Tell {{name}} about listing {{listing_id}} at {{listing_address}}, listed at {{listing_price}}.',
    greeting: 'Hi {{name}}, this is Ava from Harbour Realty.',
  }));
  ({ key } = await apiKey(tenant, ['start_call', 'calls:read']));
});

const start = async (body: Record<string, unknown>, token = key) => {
  const res = await api('POST', `${ws(tenant)}/agents/${agent.id}/start-call`, { token, body });
  expect(res.status).toBe(201);
  return res.body.id as string;
};

/** Ended, and handed to the post-call pipeline (its message sent). */
async function settled(callId: string, timeoutMs = 20_000): Promise<Json> {
  const detail = await waitForCall(
    tenant,
    callId,
    (c) => ['completed', 'failed'].includes(c.status),
    timeoutMs,
  );
  await waitFor(async () => (await getCall(tenant.workspaceId, callId))?.postCallSentAt, {
    what: () => `call ${callId} to be reported to the post-call pipeline: ${JSON.stringify(detail)}`,
    timeoutMs: 10_000,
  });
  return (await api('GET', `${ws(tenant)}/calls/${callId}`, { token: key })).body;
}

/** The telephony simulator's view of a call: its state and the callbacks it sent. */
async function simulatorCall(providerCallId: string): Promise<Json> {
  return fetch(`${stackState().env.TELEPHONY_SIMULATOR_URL}/calls/${providerCallId}`, {
    headers: { authorization: `Bearer ${stackState().env.TELEPHONY_AUTH_TOKEN}` },
  }).then((r) => r.json() as Promise<Json>);
}

async function chargesOf(callId: string) {
  const { data } = await LedgerEntryEntity.query
    .byOrganisation({ organisationId: tenant.organisationId })
    .go({ pages: 'all', consistent: true });
  return data.filter((entry) => entry.sourceKey.startsWith(`${callId}:`));
}

describe('an answered call', () => {
  it('completes with a transcript, the quoted listing, a playable recording, 60 s billed once', async () => {
    const callId = await start({
      to_phone: TEST_NUMBERS.answered,
      parameters: {
        name: 'Sam',
        listing_id: 'L-1042',
        listing_address: '12 Harbour St, Pyrmont NSW 2009',
        listing_price: '$1,250,000',
      },
    });
    const call = await settled(callId);
    expect(call).toMatchObject({
      status: 'completed',
      end_reason: 'agent_hangup', // the simulated caller says goodbye; the agent ends the call
      direction: 'outbound',
      duration_seconds: 60,
      credits: 20,
      record: true,
      recording_available: true,
      from_phone: number.phone_number,
      parameters: { name: 'Sam', listing_id: 'L-1042' },
    });
    expect(call.status_history.map((e: Json) => e.status)).toEqual([
      'created',
      'initiated',
      'connected',
      'inprogress',
      'completed',
    ]);
    for (const field of ['initiated_at', 'connected_at', 'inprogress_at', 'ended_at'])
      expect(call[field]).toEqual(expect.any(String));
    // Timestamps are the wall clock (when it happened, never in the future); the duration is the
    // provider's (60 simulated seconds, played faster than real time).
    expect(Date.parse(call.ended_at)).toBeLessThanOrEqual(Date.now());
    expect(Date.parse(call.ended_at)).toBeGreaterThanOrEqual(Date.parse(call.connected_at));
    expect(Date.parse(call.connected_at)).toBeGreaterThanOrEqual(Date.parse(call.created_at));
    expect(call.transcript[0]).toEqual({
      role: 'agent',
      text: 'Hi Sam, this is Ava from Harbour Realty.',
      offset_seconds: 0,
      // Which agent spoke (the call's own, as no handoff happened).
      agent_id: call.agent_id,
    });
    // The agent (its language model) quotes the listing's price; the quote is kept by the listing's id.
    expect(call.transcript.some((t: Json) => t.role === 'agent' && t.text.includes('$1,250,000'))).toBe(true);
    expect(call.quoted_listings).toEqual([
      {
        listing_id: 'L-1042',
        item_id: null,
        address: '12 Harbour St, Pyrmont NSW 2009',
        price: '$1,250,000',
      },
    ]);

    // The recording: 302 to a short-lived signed URL of a real WAV under recordings/<workspace>/<call>.wav.
    const redirect = await api('GET', `${ws(tenant)}/calls/${callId}/recording`, { token: key });
    expect(redirect.status).toBe(302);
    const location = redirect.headers.location;
    expect(location).toContain(`recordings/${tenant.workspaceId}/${callId}.wav`);
    expect(location).toMatch(/X-Amz-Signature=/);
    const audio = await fetch(location);
    expect(audio.status).toBe(200);
    const wav = describeWav(new Uint8Array(await audio.arrayBuffer()));
    expect(wav).toMatchObject({ channels: 1, bitsPerSample: 8 });
    // As long as the call (± 1 s), and the recording's reported duration says so too.
    expect(Math.abs(wav!.seconds - call.duration_seconds)).toBeLessThanOrEqual(1);
    expect(Math.abs(call.recording.duration_seconds - call.duration_seconds)).toBeLessThanOrEqual(1);

    const charges = await chargesOf(callId);
    expect(charges.map((c) => [c.sourceKey, c.amountUnits])).toEqual([[`${callId}:call`, -1200]]);
    expect((await workspaceRecord(tenant.workspaceId))?.activeCalls).toBe(0);
  });

  it('a call with record: false has no recording (404)', async () => {
    const callId = await start({ to_phone: TEST_NUMBERS.answered, record: false });
    const call = await settled(callId);
    expect(call).toMatchObject({
      status: 'completed',
      record: false,
      recording: null,
      recording_available: false,
    });
    const res = await api('GET', `${ws(tenant)}/calls/${callId}/recording`, { token: key });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: 'Recording not found' });
  });
});

describe('the failing test numbers', () => {
  it.each([
    [TEST_NUMBERS.busy, 'busy'],
    [TEST_NUMBERS.noAnswer, 'no_answer'],
    [TEST_NUMBERS.failed, 'failed'],
  ])('%s ends failed with end_reason %s, nothing billed, no recording', async (to, reason) => {
    const callId = await start({ to_phone: to });
    const call = await settled(callId);
    expect(call).toMatchObject({
      status: 'failed',
      end_reason: reason,
      duration_seconds: 0,
      credits: 0,
      connected_at: null,
      recording: null,
    });
    expect(call.status_history.map((e: Json) => e.status)).toEqual(['created', 'initiated', 'failed']);
    expect(await chargesOf(callId)).toEqual([]);
  });
});

describe('+61491570114: every callback twice and out of order', () => {
  it('completes once: one event per status, one charge, one slot freed', async () => {
    const callId = await start({ to_phone: TEST_NUMBERS.duplicated });
    const call = await settled(callId);
    // The last duplicates arrive after the terminal callback: wait until the simulator has sent every
    // one (and the stack has handled them all), then check that none of them moved the call.
    await waitForQuiescence();
    const again = (await api('GET', `${ws(tenant)}/calls/${callId}`, { token: key })).body;
    // The post-call pipeline adds its analysis in its own time; the call itself must not move.
    expect(withoutPostCallAnalysis(again)).toEqual(withoutPostCallAnalysis(call));
    expect(call).toMatchObject({
      status: 'completed',
      end_reason: 'agent_hangup', // the simulated caller says goodbye; the agent ends the call
      duration_seconds: 60,
      credits: 20,
    });
    expect(call.status_history.map((e: Json) => e.status)).toEqual([
      'created',
      'initiated',
      'connected',
      'inprogress',
      'completed',
    ]);
    expect((await chargesOf(callId)).length).toBe(1);
    expect((await workspaceRecord(tenant.workspaceId))?.activeCalls).toBe(0);
    // The simulator really did send duplicates, and each was accepted (200) and ignored.
    const view = await getCall(tenant.workspaceId, callId);
    const sim = await simulatorCall(view!.providerCallId!);
    expect(sim.finished).toBe(true);
    const statusCallbacks = sim.callbacks.filter((c: Json) => c.kind === 'status');
    // Only what the dispatcher subscribed to (the answer, the end) and the voice runtime's `started`
    // are sent, as Twilio would: each twice, so 3 duplicates — no `initiated` or `ringing` at all.
    expect(
      statusCallbacks.map((c: Json) => c.status).filter((s: string) => s === 'initiated' || s === 'ringing'),
    ).toEqual([]);
    expect(statusCallbacks.filter((c: Json) => c.duplicate).length).toBe(3);
    expect(statusCallbacks.every((c: Json) => c.http_status === 200)).toBe(true);
  });
});

describe('+61491570113: a 30-minute call', () => {
  it('is billed 1,800 s (600 credits)', async () => {
    const callId = await start({ to_phone: TEST_NUMBERS.long, record: false });
    const call = await settled(callId, 60_000);
    expect(call).toMatchObject({
      status: 'completed',
      end_reason: 'agent_hangup', // the simulated caller says goodbye; the agent ends the call
      duration_seconds: 1800,
      credits: 600,
    });
    expect((await chargesOf(callId)).map((c) => c.amountUnits)).toEqual([-36_000]);
  }, 90_000);
});

describe('hangup', () => {
  it('ends a call in progress (end_reason hangup), once; the slot comes back', async () => {
    const viewer = await addMember(tenant, 'viewer');
    const callId = await start({ to_phone: TEST_NUMBERS.long });
    // Hung up once the call is talking: its relay session has begun (a hang-up before it would leave
    // no conversation to keep) and the simulator has played a few seconds of it, so it has a duration
    // and a recording.
    await waitForCall(tenant, callId, (c) => c.status === 'inprogress');
    const providerCallId = (await getCall(tenant.workspaceId, callId))?.providerCallId;
    await waitFor(async () => (await getCall(tenant.workspaceId, callId))?.relayConnectionId, {
      what: 'the relay session to begin',
    });
    await waitFor(async () => ((await simulatorCall(providerCallId!)).talked_seconds as number) >= 3, {
      what: 'three simulated seconds talked',
    });
    const denied = await api('POST', `${ws(tenant)}/calls/${callId}/hangup`, { token: viewer.token });
    expect(denied.status).toBe(403);
    expect(denied.body).toEqual({ error: 'Viewers have read-only access' });
    const res = await api('POST', `${ws(tenant)}/calls/${callId}/hangup`, { token: tenant.owner.token });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'completed', end_reason: 'hangup' });
    expect(res.body.duration_seconds).toBeGreaterThan(0);
    expect(res.body.duration_seconds).toBeLessThan(1800);
    const second = await api('POST', `${ws(tenant)}/calls/${callId}/hangup`, { token: tenant.owner.token });
    expect(second.status).toBe(409);
    expect(second.body).toEqual({ error: 'Call has already ended' });
    // The provider's own final callbacks still bring the transcript and the recording.
    const call = await settled(callId);
    expect(call).toMatchObject({
      status: 'completed',
      end_reason: 'hangup',
      duration_seconds: res.body.duration_seconds,
      recording_available: true,
    });
    expect(call.transcript.length).toBeGreaterThan(0);
    // Shown to 2 decimals, as the ledger shows credits.
    expect(call.credits).toBe(Math.round((res.body.duration_seconds / 3) * 100) / 100);
    expect(Date.parse(call.ended_at)).toBeLessThanOrEqual(Date.now());
    // The recording holds the part of the call that was talked.
    const redirect = await api('GET', `${ws(tenant)}/calls/${callId}/recording`, { token: key });
    const wav = describeWav(new Uint8Array(await (await fetch(redirect.headers.location)).arrayBuffer()));
    expect(Math.abs(wav!.seconds - call.duration_seconds)).toBeLessThanOrEqual(1);
    expect((await workspaceRecord(tenant.workspaceId))?.activeCalls).toBe(0);
  });
});

describe('inbound calls', () => {
  async function dial(to: string): Promise<Json> {
    const res = await fetch(`${stackState().env.TELEPHONY_SIMULATOR_URL}/inbound`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: `Bearer ${stackState().env.TELEPHONY_AUTH_TOKEN}`,
      },
      body: JSON.stringify({ from: '+61491570199', to }),
    });
    expect(res.status).toBe(201);
    return res.json();
  }

  it('are answered by an agent that is answering, and logged as inbound', async () => {
    const dialled = await dial(number.phone_number);
    expect(dialled.accepted).toBe(true);
    const callId = await waitFor(
      async () =>
        (await api('GET', `${ws(tenant)}/calls?direction=inbound`, { token: key })).body.items[0]?.id as
          string | undefined,
      { what: 'the inbound call in the call log', timeoutMs: 10_000 },
    );
    const call = await settled(callId);
    expect(call).toMatchObject({
      direction: 'inbound',
      status: 'completed',
      from_phone: '+61491570199',
      to_phone: number.phone_number,
      agent_id: agent.id,
      duration_seconds: 60,
      credits: 20,
      recording_available: true,
    });
    expect(call.transcript[0].role).toBe('agent');
  });

  it('are refused politely when the agent is not answering, and logged only as a missed call', async () => {
    const before = (await api('GET', `${ws(tenant)}/calls?direction=inbound`, { token: key })).body.items
      .length;
    const off = await api('PATCH', `${ws(tenant)}/agents/${agent.id}`, {
      token: tenant.owner.token,
      body: { answering_calls: false },
    });
    expect(off.status).toBe(200);
    try {
      expect((await dial(number.phone_number)).accepted).toBe(false);
      expect((await dial('+61255501111')).accepted).toBe(false); // a number nobody holds
      await waitForQuiescence(); // nothing the refusals could have set off is still going
      // The refusal by the agent is in the call log as a missed call; the number nobody holds is not.
      const after = (await api('GET', `${ws(tenant)}/calls?direction=inbound`, { token: key })).body.items;
      expect(after.length).toBe(before + 1);
      expect(after[0]).toMatchObject({ status: 'failed', end_reason: 'not_answering', credits: 0 });
    } finally {
      await api('PATCH', `${ws(tenant)}/agents/${agent.id}`, {
        token: tenant.owner.token,
        body: { answering_calls: true },
      });
    }
  });
});
