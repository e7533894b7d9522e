import { cli } from '../../helpers/cli.js';
import { randomBytes } from 'node:crypto';
import { BillingAccountEntity, LedgerEntryEntity } from '../../../functions/billing/entities.js';
import { getCall } from '../../../functions/calling/service.js';
import { VOICE_WEBHOOK_PATH } from '../../../functions/providers/telephony/index.js';
import { signTwilioRequest, SIGNATURE_HEADER } from '../../../functions/providers/telephony/twilio-format.js';
import { api, type Json } from '../../helpers/http.js';
import { stackState } from '../../helpers/stack-state.js';
import { waitForQuiescence } from '../../helpers/wait.js';
import { apiKey, readyToCall, waitForCall, workspaceRecord, ws, type Tenant } from './fixtures.js';

/**
 * Inbound calls as a newcomer makes them: `npm run cli -- call receive --from … --to …` has the
 * telephony simulator dial one of our numbers. An agent that is answering takes the call; one that is
 * not (switched off, or suspended by billing) refuses it, and the refused call is logged as a missed
 * call — `failed`, end reason `not_answering`, inbound, from/to and its time — never charged and never
 * reported to the post-call pipeline.
 */

const CALLER = '+61491570199';

let tenant: Tenant;
let agent: Json;
let number: Json;
let key: string;

beforeAll(async () => {
  ({ tenant, agent, number } = await readyToCall());
  ({ key } = await apiKey(tenant, ['start_call', 'calls:read']));
});

/** The CLI, as `npm run cli --` runs it, against the test stack (LOCAL_STACK_STATE names it). */
const inboundCalls = async (): Promise<Json[]> =>
  (await api('GET', `${ws(tenant)}/calls?direction=inbound`, { token: key })).body.items;

const charges = async (callId: string) => {
  const { data } = await LedgerEntryEntity.query
    .byOrganisation({ organisationId: tenant.organisationId })
    .go({ pages: 'all', consistent: true });
  return data.filter((entry) => entry.sourceKey.startsWith(`${callId}:`));
};

async function answering(on: boolean) {
  const res = await api('PATCH', `${ws(tenant)}/agents/${agent.id}`, {
    token: tenant.owner.token,
    body: { answering_calls: on },
  });
  expect(res.status).toBe(200);
}

/** Checks a missed call in the log and that nothing else came of it. */
async function expectMissed(call: Json, startedAt: number) {
  expect(call).toMatchObject({
    direction: 'inbound',
    status: 'failed',
    end_reason: 'not_answering',
    from_phone: CALLER,
    to_phone: number.phone_number,
    agent_id: agent.id,
    duration_seconds: 0,
    credits: 0,
    recording_available: false,
  });
  for (const at of [call.created_at, call.ended_at]) {
    expect(Date.parse(at)).toBeGreaterThanOrEqual(startedAt - 1000);
    expect(Date.parse(at)).toBeLessThanOrEqual(Date.now());
  }
  const detail = (await api('GET', `${ws(tenant)}/calls/${call.id}`, { token: key })).body;
  expect(detail.status_history.map((e: Json) => [e.status, e.end_reason])).toEqual([
    ['created', null],
    ['failed', 'not_answering'],
  ]);
  await waitForQuiescence();
  expect((await getCall(tenant.workspaceId, call.id))?.postCallSentAt).toBeUndefined();
  expect(await charges(call.id)).toEqual([]);
  expect((await workspaceRecord(tenant.workspaceId))?.activeCalls).toBe(0);
}

describe('npm run cli -- call receive', () => {
  it('dials one of our numbers: an answering agent takes the call, and the CLI prints its id', async () => {
    const json = JSON.parse(
      await cli('call', 'receive', '--from', CALLER, '--to', number.phone_number, '--json'),
    );
    expect(json).toMatchObject({
      accepted: true,
      call_id: expect.stringMatching(/^call_/),
    });
    const call = await waitForCall(tenant, json.call_id);
    expect(call).toMatchObject({
      direction: 'inbound',
      status: 'completed',
      from_phone: CALLER,
      to_phone: number.phone_number,
      agent_id: agent.id,
    });
    const line = await cli('call', 'receive', '--from', CALLER, '--to', number.phone_number);
    expect(line).toMatch(/^call_\w+ in progress: an agent answered/);
    await waitForCall(tenant, line.split(' ')[0]);
  });

  it('refuses a number that is not E.164 (exit 2 for usage, 1 for a bad number)', async () => {
    await expect(cli('call', 'receive', '--from', CALLER)).rejects.toMatchObject({ code: 2 });
    await expect(
      cli('call', 'receive', '--from', '0491570199', '--to', number.phone_number),
    ).rejects.toMatchObject({ code: 1 });
  });
});

describe('a call the agent does not answer is logged as missed', () => {
  it('Answering calls off: refused, and in the call log as failed / not_answering, not charged, not reported', async () => {
    await answering(false);
    try {
      const before = (await inboundCalls()).length;
      const startedAt = Date.now();
      const line = await cli('call', 'receive', '--from', CALLER, '--to', number.phone_number);
      expect(line).toMatch(/^refused: nobody answered/);
      const calls = await inboundCalls();
      expect(calls).toHaveLength(before + 1);
      await expectMissed(calls[0], startedAt);
    } finally {
      await answering(true);
    }
  });

  it('suspended by billing: refused and logged the same way', async () => {
    await BillingAccountEntity.patch({ organisationId: tenant.organisationId })
      .set({ agentsSuspended: true })
      .go();
    try {
      const startedAt = Date.now();
      const json = JSON.parse(
        await cli('call', 'receive', '--from', CALLER, '--to', number.phone_number, '--json'),
      );
      expect(json.accepted).toBe(false);
      const [missed] = await inboundCalls();
      expect(missed.id).toEqual(expect.stringMatching(/^call_/));
      await expectMissed(missed, startedAt);
    } finally {
      await BillingAccountEntity.patch({
        organisationId: tenant.organisationId,
      })
        .set({ agentsSuspended: false })
        .go();
    }
  });

  it("is logged once when the provider repeats its webhook, and the provider's status callback for it changes nothing", async () => {
    await answering(false);
    try {
      const before = (await inboundCalls()).length;
      const url = `${stackState().base_url}${VOICE_WEBHOOK_PATH}`;
      const post = (target: string, params: Record<string, string>) =>
        fetch(target, {
          method: 'POST',
          headers: {
            'content-type': 'application/x-www-form-urlencoded',
            [SIGNATURE_HEADER]: signTwilioRequest(stackState().env.TELEPHONY_AUTH_TOKEN, target, params),
          },
          body: new URLSearchParams(params).toString(),
        });
      const incoming = {
        CallSid: `CA${randomBytes(16).toString('hex')}`,
        From: CALLER,
        To: number.phone_number,
        Direction: 'inbound',
        CallStatus: 'ringing',
      };
      const answers = await Promise.all([1, 2, 3].map(() => post(`${url}?event=incoming`, incoming)));
      const twiml = await Promise.all(answers.map((res) => res.text()));
      expect(new Set(twiml).size).toBe(1);
      expect(twiml[0]).toContain('<Hangup/>');
      const calls = await inboundCalls();
      expect(calls).toHaveLength(before + 1);
      const [missed] = calls;

      // Twilio reports the refused call's end to the number's status callback.
      const ended = await post(url, {
        ...incoming,
        CallStatus: 'completed',
        CallDuration: '6',
      });
      expect(ended.status).toBe(200);
      await expectMissed((await inboundCalls())[0], Date.parse(missed.created_at));
      const { sentiment: _s, ...after } = (
        await api('GET', `${ws(tenant)}/calls/${missed.id}`, { token: key })
      ).body;
      expect(after).toMatchObject({
        status: 'failed',
        end_reason: 'not_answering',
        duration_seconds: 0,
      });
    } finally {
      await answering(true);
    }
  });

  it('a number nobody holds is refused and logs nothing', async () => {
    const before = (await inboundCalls()).length;
    const json = JSON.parse(await cli('call', 'receive', '--from', CALLER, '--to', '+61255501111', '--json'));
    expect(json.accepted).toBe(false);
    expect(await cli('call', 'receive', '--from', CALLER, '--to', '+61255501111')).toMatch(
      /^refused: nobody answered \+61255501111 \(provider call CA\w+\)/,
    );
    await waitForQuiescence();
    expect(await inboundCalls()).toHaveLength(before);
  });
});
