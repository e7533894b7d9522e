import { CallEntity } from '../../../functions/calling/entities.js';
import { SmsLastOutboundEntity } from '../../../functions/sms/entities.js';
import { receiveSms } from '../../../lib/tools/cli/sms.js';
import type { StackState } from '../../../lib/local/state.js';
import { api, type Json } from '../../helpers/http.js';
import { stackState } from '../../helpers/stack-state.js';
import { waitFor } from '../../helpers/wait.js';
import { readyToCall, TEST_NUMBERS, waitForCall, ws, type Tenant } from '../calling/fixtures.js';
import { callKey } from '../../../functions/calling/call-shards.js';

/** A recorded, finished call with its short link: what the public recording page opens. */
export async function recordedCall(
  setup?: Awaited<ReturnType<typeof readyToCall>>,
): Promise<{ tenant: Tenant; agent: Json; call: Json; code: string }> {
  const { tenant, agent } = setup ?? (await readyToCall({ name: 'Riley' }));
  const started = await api('POST', `${ws(tenant)}/agents/${agent.id}/start-call`, {
    token: tenant.owner.token,
    body: { to_phone: TEST_NUMBERS.answered },
  });
  if (started.status !== 201) throw new Error(`start-call: ${started.status} ${started.text}`);
  const call = await waitForCall(tenant, started.body.id, (c) => c.status === 'completed' && c.short_url);
  const code = new URL(call.short_url).pathname.split('/').pop() as string;
  return { tenant, agent, call, code };
}

/** The call's recording, made older than the retention (6 months): it must show as unavailable. */
export async function ageRecording(tenant: Tenant, callId: string): Promise<void> {
  const old = new Date(Date.now() - 200 * 86_400_000).toISOString();
  await CallEntity.patch(callKey(tenant.workspaceId, callId)).set({ endedAt: old }).go();
}

/** The call's recording object is gone (its key names nothing). */
export async function loseRecording(tenant: Tenant, callId: string): Promise<void> {
  await CallEntity.patch(callKey(tenant.workspaceId, callId))
    .set({ recordingKey: `recordings/${tenant.workspaceId}/gone-${callId}.wav` })
    .go();
}

/**
 * A recorded call whose agent texts the caller afterwards (the default caller SMS, with the page's
 * link), then the caller's reply, delivered by the SMS simulator to our SMS webhook as the provider
 * would: the reply is tied to the call's short code.
 */
export async function recordedCallWithReply(
  body: string,
): Promise<{ tenant: Tenant; call: Json; code: string }> {
  const setup = await readyToCall({ name: 'Riley', post_call_actions: [{ type: 'sms_caller' }] });
  const { tenant, call, code } = await recordedCall(setup);
  // The reply is tied to the code once the post-call SMS has been sent and remembered as the
  // latest message to the caller: wait for that, not for the whole (shared) stack to be quiet.
  await waitFor(
    async () => {
      const { data } = await SmsLastOutboundEntity.get({
        workspaceId: tenant.workspaceId,
        phone: call.to_phone,
      }).go({ consistent: true });
      return data?.shortCode === code ? data : undefined;
    },
    { what: `the post-call SMS carrying ${code}`, timeoutMs: 30_000 },
  );
  await receiveSms(stackState() as unknown as StackState, { from: call.to_phone, to: call.from_phone, body });
  await waitFor(
    async () => {
      const res = await api('GET', `/api/v1/public/recordings/${code}/replies`);
      return res.status === 200 && res.body.items.length > 0 ? res.body.items : undefined;
    },
    { what: `the reply to ${code}`, timeoutMs: 30_000 },
  );
  return { tenant, call, code };
}
