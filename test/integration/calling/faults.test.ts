import type { Context, SQSEvent } from 'aws-lambda';
import { WorkspaceEntity } from '../../../functions/access/entities.js';
import { LedgerEntryEntity } from '../../../functions/billing/entities.js';
import { CallEntity, OpenCallEntity } from '../../../functions/calling/entities.js';
import { dispatchCall, statusCallbackUrl } from '../../../functions/calling/dispatch.js';
import { handler as dispatchHandler } from '../../../functions/calling/handlers/dispatch-calls.js';
import { getCall } from '../../../functions/calling/service.js';
import { startCall } from '../../../functions/calling/start-call.js';
import { sweepCalls } from '../../../functions/calling/sweeper.js';
import { resetClock, setClock } from '../../../functions/platform/clock.js';
import {
  setTelephony,
  telephony,
  type ProviderCallState,
} from '../../../functions/providers/telephony/index.js';
import { signTwilioRequest, SIGNATURE_HEADER } from '../../../functions/providers/telephony/twilio-format.js';
import { api, type Json, withoutPostCallAnalysis } from '../../helpers/http.js';
import { stackState } from '../../helpers/stack-state.js';
import { telephonyActivity, waitFor, waitForQuiescence } from '../../helpers/wait.js';
import {
  apiKey,
  readyToCall,
  TEST_NUMBERS,
  waitForCall,
  workspaceRecord,
  ws,
  type Tenant,
} from '../../e2e/calling/fixtures.js';
import { callKey } from '../../../functions/calling/call-shards.js';

/**
 * Faults: forged callbacks, redelivered dispatch messages, a lost dispatch message, a provider that
 * never reports the end of a call, a crash between a call's end and its charge. Nothing is lost, and
 * nothing is dialled, charged or reported twice.
 */

let tenant: Tenant;
let agent: Json;
let key: string;

beforeAll(async () => {
  ({ tenant, agent } = await readyToCall({ settings: { max_duration_seconds: 60 } }));
  ({ key } = await apiKey(tenant, ['start_call', 'calls:read']));
});

afterEach(() => {
  resetClock();
  setTelephony(undefined);
});

const env = () => stackState().env;
const simulator = async (path: string) =>
  (
    await fetch(`${env().TELEPHONY_SIMULATOR_URL}${path}`, {
      headers: { authorization: `Bearer ${env().TELEPHONY_AUTH_TOKEN}` },
    })
  ).json() as Promise<Json>;
const dialsOf = async (callId: string) => (await simulator(`/calls?call_id=${callId}`)).items as Json[];

async function start(to: string, body: Record<string, unknown> = {}): Promise<string> {
  const res = await api('POST', `${ws(tenant)}/agents/${agent.id}/start-call`, {
    token: key,
    body: { to_phone: to, ...body },
  });
  expect(res.status).toBe(201);
  return res.body.id;
}

const detail = async (callId: string) =>
  (await api('GET', `${ws(tenant)}/calls/${callId}`, { token: key })).body;

/** POSTs a form callback to the gateway's voice webhook, signed with `token` over `signedUrl`. */
async function callback(
  callId: string,
  params: Record<string, string>,
  sign: { token?: string; url?: string; header?: string | null } = {},
) {
  const url = statusCallbackUrl(tenant.workspaceId, callId);
  const signature =
    sign.header === null
      ? undefined
      : (sign.header ?? signTwilioRequest(sign.token ?? env().TELEPHONY_AUTH_TOKEN, sign.url ?? url, params));
  return fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      ...(signature ? { [SIGNATURE_HEADER]: signature } : {}),
    },
    body: new URLSearchParams(params).toString(),
  });
}

describe('the voice webhook checks signatures', () => {
  it('a bad, missing or misplaced signature is 401 and changes nothing', async () => {
    const callId = await start(TEST_NUMBERS.long);
    await waitForCall(tenant, callId, (c) => c.status === 'inprogress');
    const before = await detail(callId);
    const view = await getCall(tenant.workspaceId, callId);
    const forged = { CallSid: view!.providerCallId!, CallStatus: 'completed', CallDuration: '5' };
    const attempts = [
      await callback(callId, forged, { token: 'not-the-auth-token' }),
      await callback(callId, forged, { header: null }),
      await callback(callId, forged, { header: 'garbage' }),
      // Signed for another call's URL: the query string is part of what is signed.
      await callback(callId, forged, {
        url: statusCallbackUrl(tenant.workspaceId, 'call_01ARZ3NDEKTSV4RRFFQ69G5FAV'),
      }),
    ];
    // Signed, then tampered with (the duration changed after signing).
    const signature = signTwilioRequest(
      env().TELEPHONY_AUTH_TOKEN,
      statusCallbackUrl(tenant.workspaceId, callId),
      forged,
    );
    attempts.push(await callback(callId, { ...forged, CallDuration: '9999' }, { header: signature }));
    for (const res of attempts) {
      expect(res.status).toBe(401);
      expect(await res.json()).toEqual({ error: 'Unauthorized' });
    }
    expect(await detail(callId)).toEqual(before);
    expect((await workspaceRecord(tenant.workspaceId))?.activeCalls).toBeGreaterThan(0);
    await api('POST', `${ws(tenant)}/calls/${callId}/hangup`, { token: key });
  });
});

describe('dispatch', () => {
  it('a redelivered dispatch message never dials a second time', async () => {
    const callId = await start(TEST_NUMBERS.answered);
    await waitForCall(tenant, callId, (c) => c.status !== 'created');
    expect(await dispatchCall(tenant.workspaceId, callId)).toBe('skipped');
    const message = { type: 'call.dispatch', call_id: callId, workspace_id: tenant.workspaceId };
    const event = {
      Records: [1, 2].map((n) => ({
        messageId: `redelivered-${n}`,
        body: JSON.stringify(message),
        attributes: { ApproximateReceiveCount: '2' },
      })),
    } as unknown as SQSEvent;
    const result = await dispatchHandler(event, {
      functionName: 'DispatchCalls',
      getRemainingTimeInMillis: () => 30_000,
    } as Context);
    expect(result).toEqual({ batchItemFailures: [] });
    await waitForCall(tenant, callId);
    expect(await dialsOf(callId)).toHaveLength(1);
  });

  it('a dispatch message that is lost is sent again by the sweeper, and the call is dialled once', async () => {
    const goodQueue = process.env.QUEUE_URL_CALLS;
    process.env.QUEUE_URL_CALLS = `${goodQueue}-does-not-exist`;
    let call;
    try {
      call = await startCall({
        principal: {
          kind: 'api_key',
          keyId: 'key_01ARZ3NDEKTSV4RRFFQ69G5FAV',
          workspaceId: tenant.workspaceId,
          organisationId: tenant.organisationId,
          scopes: ['start_call'],
        },
        workspaceId: tenant.workspaceId,
        agentId: agent.id,
        body: { to_phone: TEST_NUMBERS.answered },
      });
    } finally {
      process.env.QUEUE_URL_CALLS = goodQueue;
    }
    // Nothing is left that could dial it (no message on a queue or in flight, nothing playing): it
    // stays `created` until the sweeper finds it.
    await waitForQuiescence();
    expect((await detail(call.id)).status).toBe('created'); // nobody dialled it
    expect(await dialsOf(call.id)).toHaveLength(0);
    setClock(new Date(Date.now() + 60_000));
    const report = await sweepCalls();
    expect(report.redispatched).toBeGreaterThanOrEqual(1);
    resetClock();
    const ended = await waitForCall(tenant, call.id);
    expect(ended.status).toBe('completed');
    expect(await dialsOf(call.id)).toHaveLength(1);
  });
});

describe('the sweeper', () => {
  it('fails a call that never ends as lost, frees its slot, reports it once and hangs it up at the provider', async () => {
    const activeBefore = (await workspaceRecord(tenant.workspaceId))!.activeCalls;
    const callId = await start(TEST_NUMBERS.silent);
    await waitForCall(tenant, callId, (c) => c.status === 'inprogress');
    expect((await workspaceRecord(tenant.workspaceId))!.activeCalls).toBe(activeBefore + 1);
    // The simulator has sent every callback of the call's timeline and the stack has handled them:
    // the call is still up at the provider, and nothing more will come.
    const settled = await waitForQuiescence();
    expect(telephonyActivity(settled).calls_open).toBeGreaterThanOrEqual(1);
    const [placed] = await dialsOf(callId);
    expect(placed).toMatchObject({ finished: false, hung_up: false });
    expect((await detail(callId)).status).toBe('inprogress'); // the provider never reports an end

    // Past the agent's maximum duration (60 s) plus the margin (300 s).
    setClock(new Date(Date.now() + 400_000));
    const report = await sweepCalls();
    expect(report.lost).toBeGreaterThanOrEqual(1);
    resetClock();
    // The provider's end of the hung-up call (with its transcript) and the post-call pipeline's
    // analysis come in their own time: once everything is done, the call must no longer move.
    await waitFor(async () => (await dialsOf(callId))[0]?.finished, {
      what: 'the simulator to send the end of the hung-up call',
    });
    await waitForQuiescence();
    const call = await detail(callId);
    expect(call).toMatchObject({ status: 'failed', end_reason: 'lost' });
    expect(call.status_history.at(-1)).toMatchObject({
      status: 'failed',
      end_reason: 'lost',
      source: 'sweeper',
    });
    expect((await workspaceRecord(tenant.workspaceId))!.activeCalls).toBe(activeBefore);
    const view = await getCall(tenant.workspaceId, callId);
    expect(view!.postCallSentAt).toEqual(expect.any(String));
    const { data: markers } = await OpenCallEntity.query
      .byShard({ shard: view!.openShard })
      .go({ pages: 'all' });
    expect(markers.map((m) => m.callId)).not.toContain(callId);
    expect((await simulator(`/calls/${view!.providerCallId}`)).hung_up).toBe(true);
    // A second sweep changes nothing.
    setClock(new Date(Date.now() + 400_000));
    await sweepCalls();
    resetClock();
    expect(await detail(callId)).toEqual(call);
  });
});

describe('the sweeper reconciles a call whose callbacks stopped coming', () => {
  /** The real provider, except that it answers `state` when asked about `providerCallId`. */
  function providerSays(providerCallId: string, state: ProviderCallState | undefined) {
    const real = telephony();
    setTelephony(
      Object.assign(Object.create(real) as typeof real, {
        getCall: async (sid: string) => (sid === providerCallId ? state : real.getCall(sid)),
      }),
    );
  }

  /** A call the provider answered and then never reported again (its end callback was lost). */
  async function silentCall() {
    const activeBefore = (await workspaceRecord(tenant.workspaceId))!.activeCalls;
    const callId = await start(TEST_NUMBERS.silent, { record: false });
    await waitForCall(tenant, callId, (c) => c.status === 'inprogress');
    await waitForQuiescence();
    const view = await getCall(tenant.workspaceId, callId);
    return { callId, providerCallId: view!.providerCallId!, activeBefore };
  }

  const charges = async (callId: string) => {
    const { data } = await LedgerEntryEntity.query
      .byOrganisation({ organisationId: tenant.organisationId })
      .go({ pages: 'all', consistent: true });
    return data.filter((e) => e.sourceKey === `${callId}:call`);
  };

  it('ended at the provider: ended here as the provider says, billed its duration once, reported once', async () => {
    const { callId, providerCallId, activeBefore } = await silentCall();
    // Not silent long enough yet (and too new): the provider is not asked.
    providerSays(providerCallId, { status: 'completed', endReason: 'completed', durationSeconds: 42 });
    await sweepCalls();
    expect((await detail(callId)).status).toBe('inprogress');

    const endedAt = new Date().toISOString();
    providerSays(providerCallId, {
      status: 'completed',
      endReason: 'completed',
      durationSeconds: 42,
      endedAt,
    });
    setClock(new Date(Date.now() + 60_000)); // silent for a minute: past CALL_RECONCILE_AFTER_SECONDS
    const report = await sweepCalls();
    resetClock();
    expect(report.reconciled).toBeGreaterThanOrEqual(1);
    const call = await detail(callId);
    expect(call).toMatchObject({
      status: 'completed',
      end_reason: 'completed',
      duration_seconds: 42,
      credits: 14,
      ended_at: endedAt,
    });
    expect(call.status_history.at(-1)).toMatchObject({ status: 'completed', source: 'sweeper' });
    expect((await workspaceRecord(tenant.workspaceId))!.activeCalls).toBe(activeBefore);
    expect(await charges(callId)).toHaveLength(1);
    // Its transcript was to come with the lost end callback: reported once that wait is over.
    expect((await getCall(tenant.workspaceId, callId))!.postCallSentAt).toBeUndefined();
    setClock(new Date(Date.now() + 300_000));
    expect((await sweepCalls()).finished).toBeGreaterThanOrEqual(1);
    resetClock();
    expect((await getCall(tenant.workspaceId, callId))!.postCallSentAt).toEqual(expect.any(String));

    // The provider's own end callback arrives after all (the simulator hangs the call up): it changes
    // nothing — no second charge, no second report, the slot is not given back twice. (A transcript
    // comes from the voice relay's session, which this silent call never opened.)
    setTelephony(undefined);
    const reported = (await getCall(tenant.workspaceId, callId))!.postCallSentAt;
    await fetch(`${env().TELEPHONY_SIMULATOR_URL}/calls/${providerCallId}/hangup`, {
      method: 'POST',
      headers: { authorization: `Bearer ${env().TELEPHONY_AUTH_TOKEN}` },
    });
    await waitFor(async () => (await simulator(`/calls/${providerCallId}`)).finished, {
      what: 'the simulator to send the end of the call',
    });
    await waitForQuiescence();
    expect(await charges(callId)).toHaveLength(1);
    expect((await getCall(tenant.workspaceId, callId))!.postCallSentAt).toBe(reported);
    expect((await workspaceRecord(tenant.workspaceId))!.activeCalls).toBe(activeBefore);
    const { transcript, ...after } = withoutPostCallAnalysis(await detail(callId));
    const { transcript: _none, ...before } = withoutPostCallAnalysis(call);
    expect(after).toEqual(before);
    expect(transcript).toEqual([]);
  });

  it('unknown to the provider: lost, its slot freed, reported once', async () => {
    const { callId, providerCallId, activeBefore } = await silentCall();
    providerSays(providerCallId, undefined);
    setClock(new Date(Date.now() + 60_000));
    const report = await sweepCalls();
    resetClock();
    expect(report.lost).toBeGreaterThanOrEqual(1);
    const call = await detail(callId);
    expect(call).toMatchObject({ status: 'failed', end_reason: 'lost', credits: expect.any(Number) });
    // Ended when it was last heard of (not when the sweeper found out), billed from its answer to then.
    expect(Date.parse(call.ended_at)).toBeLessThanOrEqual(Date.now());
    expect(Date.parse(call.ended_at)).toBeGreaterThanOrEqual(Date.parse(call.connected_at));
    expect(call.status_history.at(-1)).toMatchObject({ end_reason: 'lost', source: 'sweeper' });
    expect((await workspaceRecord(tenant.workspaceId))!.activeCalls).toBe(activeBefore);
    await waitFor(async () => (await getCall(tenant.workspaceId, callId))?.postCallSentAt, {
      what: 'the lost call to be reported to the post-call pipeline',
    });
    // Charged (at most once) for its answer to when it was last heard of: nothing here.
    expect(call.credits).toBe(Math.round((call.duration_seconds / 3) * 100) / 100);
    expect((await charges(callId)).length).toBeLessThanOrEqual(1);
    setTelephony(undefined);
    // Still up at the simulator (it knew it all along): hung up there, its late end changes nothing.
    await fetch(`${env().TELEPHONY_SIMULATOR_URL}/calls/${providerCallId}/hangup`, {
      method: 'POST',
      headers: { authorization: `Bearer ${env().TELEPHONY_AUTH_TOKEN}` },
    });
    await waitForQuiescence();
    expect((await detail(callId)).status).toBe('failed');
  });

  it('still up at the provider: left alone, and asked again only after as long again', async () => {
    const { callId, providerCallId } = await silentCall();
    let asked = 0;
    const real = telephony();
    setTelephony(
      Object.assign(Object.create(real) as typeof real, {
        getCall: async (sid: string) => {
          if (sid === providerCallId) asked += 1;
          return real.getCall(sid);
        },
      }),
    );
    const later = Date.now() + 60_000;
    setClock(new Date(later));
    await sweepCalls();
    await sweepCalls();
    expect(asked).toBe(1);
    setClock(new Date(later + 60_000));
    await sweepCalls();
    expect(asked).toBe(2);
    resetClock();
    expect((await detail(callId)).status).toBe('inprogress');
    setTelephony(undefined);
    expect((await api('POST', `${ws(tenant)}/calls/${callId}/hangup`, { token: key })).status).toBe(200);
    await waitForCall(tenant, callId);
  });
});

describe('a crash between the end of a call and its charge and report', () => {
  it('a duplicate terminal callback re-runs the charge and the report, each once', async () => {
    const callId = await start(TEST_NUMBERS.answered, { record: false });
    await waitForCall(tenant, callId, (c) => c.status === 'completed' && c.credits !== null);
    await waitFor(async () => (await getCall(tenant.workspaceId, callId))?.postCallSentAt, {
      what: 'the call to be reported to the post-call pipeline',
    });
    // Every callback has been handled and the post-call pipeline is done with the call: nothing
    // still running can write the fields removed below.
    await waitForQuiescence();
    const ended = await getCall(tenant.workspaceId, callId);
    // The state a crash right after the terminal transaction leaves: ended, not charged, not reported
    // (the charge is recorded on the call with its analytics day, in one write: call-stats.ts).
    await CallEntity.patch(callKey(tenant.workspaceId, callId))
      .remove(['chargedUnits', 'statsDay', 'postCallSentAt'])
      .go();
    await OpenCallEntity.create({
      shard: ended!.openShard,
      createdAt: ended!.createdAt,
      callId,
      workspaceId: tenant.workspaceId,
    }).go();
    const res = await callback(callId, {
      CallSid: ended!.providerCallId!,
      CallStatus: 'completed',
      CallDuration: '60',
    });
    expect(res.status).toBe(200);
    const after = await getCall(tenant.workspaceId, callId);
    expect(after).toMatchObject({ status: 'completed', durationSeconds: 60, chargedUnits: 1200 });
    expect(after!.postCallSentAt).toEqual(expect.any(String));
    const { data: ledger } = await LedgerEntryEntity.query
      .byOrganisation({ organisationId: tenant.organisationId })
      .go({ pages: 'all' });
    expect(ledger.filter((e) => e.sourceKey === `${callId}:call`)).toHaveLength(1);
    const { data: markers } = await OpenCallEntity.query
      .byShard({ shard: ended!.openShard })
      .go({ pages: 'all' });
    expect(markers.map((m) => m.callId)).not.toContain(callId);
  });

  it('the workspace counter is never lowered twice for one call', async () => {
    const before = (await WorkspaceEntity.get({ workspaceId: tenant.workspaceId }).go({ consistent: true }))
      .data!.activeCalls;
    const callId = await start(TEST_NUMBERS.busy);
    // Ended and charged (a busy call is charged 0 credits, written just after the end): settled.
    const call = await waitForCall(
      tenant,
      callId,
      (c) => ['completed', 'failed'].includes(c.status) && c.credits !== null,
    );
    const view = await getCall(tenant.workspaceId, callId);
    for (let i = 0; i < 3; i += 1) {
      const res = await callback(callId, {
        CallSid: view!.providerCallId!,
        CallStatus: 'busy',
        CallDuration: '0',
      });
      expect(res.status).toBe(200);
    }
    // The post-call pipeline adds its analysis (sentiment) in its own time; the call itself must not move.
    expect(withoutPostCallAnalysis(await detail(callId))).toEqual(withoutPostCallAnalysis(call));
    expect(
      (await WorkspaceEntity.get({ workspaceId: tenant.workspaceId }).go({ consistent: true })).data!
        .activeCalls,
    ).toBe(before);
  });
});
