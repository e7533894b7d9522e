import { CallEntity } from '../../../functions/calling/entities.js';
import { api, type Json } from '../../helpers/http.js';
import { readyToCall, TEST_NUMBERS, waitForCall, ws, type Tenant } from '../calling/fixtures.js';

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
  await CallEntity.patch({ workspaceId: tenant.workspaceId, callId }).set({ endedAt: old }).go();
}

/** The call's recording object is gone (its key names nothing). */
export async function loseRecording(tenant: Tenant, callId: string): Promise<void> {
  await CallEntity.patch({ workspaceId: tenant.workspaceId, callId })
    .set({ recordingKey: `recordings/${tenant.workspaceId}/gone-${callId}.wav` })
    .go();
}
