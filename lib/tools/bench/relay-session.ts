import type { ApiClient } from '../cli/api-client.js';
import { RelayClient } from '../../local/simulators/telephony/relay-client.js';

/** What the bench parts that time a conversation share: a call whose relay session the bench holds. */

/** The simulator's scenario whose relay session is left to an outside client (the bench). */
const EXTERNAL_RELAY_NUMBER = '+61491570116';

/** Places a call to the external-relay scenario, waits for its answer and opens its session as ConversationRelay. */
export async function openBenchSession(input: {
  owner: ApiClient;
  workspace: string;
  agentId: string;
  relayUrl: string;
  signature: string;
}): Promise<RelayClient> {
  const { owner, workspace } = input;
  const started = await owner.post<{ id: string }>(`${workspace}/agents/${input.agentId}/start-call`, {
    to_phone: EXTERNAL_RELAY_NUMBER,
  });
  let providerCallId: string | undefined;
  for (let i = 0; i < 300 && !providerCallId; i += 1) {
    const detail = await owner.get<{ status: string; provider_call_id?: string }>(
      `${workspace}/calls/${started.id}`,
    );
    if (detail.status === 'inprogress' && detail.provider_call_id) providerCallId = detail.provider_call_id;
    else await new Promise((r) => setTimeout(r, 100));
  }
  if (!providerCallId) throw new Error(`call ${started.id} not answered`);
  const relay = await RelayClient.connect({ url: input.relayUrl, signature: input.signature });
  if (!(relay instanceof RelayClient)) throw new Error(`relay refused: ${relay.refused}`);
  relay.send({
    type: 'setup',
    callSid: providerCallId,
    customParameters: { call_id: started.id, workspace_id: workspace.split('/').at(-1) },
  });
  return relay;
}

/** One streamed chat completion; resolves at its first content chunk, or with its tool call at the end. */
export async function streamed(
  base: string,
  body: unknown,
): Promise<{ firstText?: number; toolCall?: unknown }> {
  const response = await fetch(`${base}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ ...(body as object), stream: true }),
  });
  if (!response.ok || !response.body) throw new Error(`model simulator: ${response.status}`);
  const decoder = new TextDecoder();
  let buffered = '';
  let firstText: number | undefined;
  let toolCall: unknown;
  for await (const bytes of response.body) {
    buffered += decoder.decode(bytes as Uint8Array, { stream: true });
    let newline: number;
    while ((newline = buffered.indexOf('\n')) >= 0) {
      const sse = buffered.slice(0, newline).trim();
      buffered = buffered.slice(newline + 1);
      if (!sse.startsWith('data:') || sse === 'data: [DONE]') continue;
      const delta = (JSON.parse(sse.slice(5)) as { choices?: { delta?: Record<string, unknown> }[] })
        .choices?.[0]?.delta;
      if (delta?.content && firstText === undefined) firstText = performance.now();
      if (delta?.tool_calls) toolCall = delta.tool_calls;
    }
  }
  return { firstText, toolCall };
}
