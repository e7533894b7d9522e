import { CallEntity } from '../../../functions/calling/entities.js';
import { api, type Json } from '../../helpers/http.js';
import { stackState } from '../../helpers/stack-state.js';
import { waitFor } from '../../helpers/wait.js';
import { ws, type Tenant } from '../calling/fixtures.js';
import { RelayClient } from '../../../lib/local/simulators/telephony/relay-client.js';
import { callKey } from '../../../functions/calling/call-shards.js';

/**
 * The conversation tests' fixtures: the stack's relay (connected with the simulator's RelayClient),
 * live calls whose relay session the test opens, and what the provider does around a session.
 */

/** The simulator's scenario whose relay session is left to an outside client (the test). */
export const EXTERNAL_RELAY_NUMBER = '+61491570116';

export const relayUrl = (): string => stackState().voice_relay_url;
export const authToken = (): string => stackState().env.TELEPHONY_AUTH_TOKEN;

/**
 * Connects to the stack's relay (or `url`), signed as the telephony provider signs its relay URL unless
 * `signature` says otherwise (false: none; a string: that one).
 */
export const connectRelay = (
  options: { signature?: string | false; url?: string } = {},
): Promise<RelayClient | { refused: number }> =>
  RelayClient.connect({
    url: options.url ?? relayUrl(),
    signature:
      options.signature === undefined ? RelayClient.sign(authToken(), relayUrl()) : options.signature,
  });

/** The `setup` frame of a live call's session (what the provider sends first). */
export const setupFrame = (call: { providerCallId: string; callId: string; workspaceId: string }) => ({
  type: 'setup',
  sessionId: 'VX0000',
  callSid: call.providerCallId,
  from: '+61491570199',
  to: '+61255500000',
  direction: 'outbound-api',
  customParameters: { call_id: call.callId, workspace_id: call.workspaceId },
});

/** Places a call to the external-relay scenario and waits until the provider named it. */
export async function liveCall(
  tenant: Tenant,
  agentId: string,
  parameters: Record<string, string> = {},
): Promise<{ callId: string; providerCallId: string; workspaceId: string }> {
  const started = await api('POST', `${ws(tenant)}/agents/${agentId}/start-call`, {
    token: tenant.owner.token,
    body: { to_phone: EXTERNAL_RELAY_NUMBER, parameters },
  });
  if (started.status !== 201) throw new Error(`start-call: ${started.status} ${started.text}`);
  const callId = started.body.id as string;
  const providerCallId = await waitFor(
    async () => {
      const res = await api('GET', `${ws(tenant)}/calls/${callId}`, { token: tenant.owner.token });
      const call = res.body as Json;
      return call.provider_call_id && call.status === 'inprogress'
        ? (call.provider_call_id as string)
        : undefined;
    },
    { what: 'the call to be answered', timeoutMs: 20_000, intervalMs: 100 },
  );
  return { callId, providerCallId, workspaceId: tenant.workspaceId };
}

/** The call as stored (what a refused session must not have changed). */
export async function storedCall(workspaceId: string, callId: string) {
  const { data } = await CallEntity.get(callKey(workspaceId, callId)).go({ consistent: true });
  return data;
}

/** Opens a session for a live call and waits for its setup to be recorded. */
export async function openSession(call: { providerCallId: string; callId: string; workspaceId: string }) {
  const relay = await connectRelay();
  if (!(relay instanceof RelayClient)) throw new Error(`relay refused: ${relay.refused}`);
  relay.send(setupFrame(call));
  await waitFor(
    async () => ((await storedCall(call.workspaceId, call.callId))?.relayConnectionId ? true : undefined),
    {
      what: 'the session to be set up',
      timeoutMs: 10_000,
      intervalMs: 50,
    },
  );
  return relay;
}

/** What Twilio does after the agent's `end`: asks the <Connect action>, and hangs up unless it dials. */
export async function providerEndsSession(providerCallId: string): Promise<{ dialled: string | null }> {
  const state = stackState();
  const res = await fetch(`${state.env.TELEPHONY_SIMULATOR_URL}/calls/${providerCallId}/relay-ended`, {
    method: 'POST',
    headers: { authorization: `Bearer ${state.env.TELEPHONY_AUTH_TOKEN}` },
  });
  if (res.status !== 200) throw new Error(`simulator relay-ended: ${res.status}`);
  return (await res.json()) as { dialled: string | null };
}

export interface ModelRequest {
  messages: { role: string; content: unknown }[];
  tools?: { function: { name: string } }[];
  /** A structured answer's schema (the call analysis, the evaluation judge). */
  response_format?: { type: string; json_schema?: { name: string; schema: Json } };
}

/** The structured requests named `schemaName` whose messages mention `marker`. */
export async function structuredRequests(schemaName: string, marker: string): Promise<ModelRequest[]> {
  return (await modelRequests()).filter(
    (r) =>
      r.response_format?.json_schema?.name === schemaName &&
      r.messages.some((m) => textOf(m.content).includes(marker)),
  );
}

/** What the service sent the model (the stack's model simulator keeps the last 200 requests). */
export async function modelRequests(): Promise<ModelRequest[]> {
  const base = stackState().env.LLM_BASE_URL.replace(/\/v1\/?$/, '');
  const res = await fetch(`${base}/requests`);
  if (res.status !== 200) throw new Error(`GET /requests of the model simulator: ${res.status}`);
  return ((await res.json()) as { requests: ModelRequest[] }).requests;
}

/** The text of a message's content (a string, or the parts' texts). */
export const textOf = (content: unknown): string =>
  typeof content === 'string'
    ? content
    : Array.isArray(content)
      ? content.map((part: { text?: string }) => part.text ?? '').join('')
      : '';
