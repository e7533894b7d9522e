import { isConditionFailure } from '../platform/table.js';
import { renderTemplate } from '../agents/template.js';
import { clock } from '../platform/clock.js';
import { logger } from '../platform/logger.js';
import { providerWebhookUrl } from '../platform/webhook-urls.js';
import { telephony, VOICE_WEBHOOK_PATH } from '../providers/telephony/index.js';
import { agentForCall } from '../agents/versions.js';
import { CallEntity, type Call } from './entities.js';
import { DEFAULT_RELAY_AGENT, relaySettings } from './relay-settings.js';
import { applyTransition } from './lifecycle.js';
import { isTerminal } from './status.js';

/**
 * The `calls` queue consumer's rule: a call is dialled at most once. The dispatcher first claims the
 * call (`created` → `dialling`, conditional); a redelivered message, a duplicate sent by the sweeper,
 * or a call hung up before it was dialled finds nothing to claim and stops there. A dial that fails is
 * never retried: the call fails (end reason `failed`).
 */
export type DispatchOutcome = 'dialled' | 'skipped' | 'failed';

/** Our status-callback URL for a call (query parameters are covered by the provider's signature). */
export function statusCallbackUrl(workspaceId: string, callId: string): string {
  const query = new URLSearchParams({ call_id: callId, workspace_id: workspaceId });
  return `${providerWebhookUrl(VOICE_WEBHOOK_PATH)}?${query.toString()}`;
}

/** Where the provider posts a call's answering-machine detection result (amd.ts). */
export const AMD_WEBHOOK_PATH = '/webhooks/telephony/amd' as const;

export function amdCallbackUrl(workspaceId: string, callId: string): string {
  const query = new URLSearchParams({ call_id: callId, workspace_id: workspaceId });
  return `${providerWebhookUrl(AMD_WEBHOOK_PATH)}?${query.toString()}`;
}

/**
 * The summaries of the other party's earlier calls when the call's agent uses conversation memories
 * (handed in by the consumer: the post-call pipeline keeps them); empty: none used.
 */
export type MemoriesSource = (call: {
  workspaceId: string;
  agentId: string;
  callId: string;
  phone: string;
}) => Promise<string[]>;

export async function dispatchCall(
  workspaceId: string,
  callId: string,
  options: { memories?: MemoriesSource } = {},
): Promise<DispatchOutcome> {
  let call: Call;
  try {
    const { data } = await CallEntity.patch({ workspaceId, callId })
      .set({ status: 'dialling', statusRank: 1, dispatchedAt: clock.now().toISOString() })
      .where((attr, op) => op.eq(attr.status, 'created'))
      .go({ response: 'all_new' });
    call = data as Call;
  } catch (error) {
    if (isConditionFailure(error)) return 'skipped'; // already claimed, ended, or unknown
    throw error;
  }

  const port = telephony();
  const parameters = (call.parameters ?? {}) as Record<string, string>;
  const memories = options.memories
    ? await options.memories({ workspaceId, agentId: call.agentId, callId, phone: call.toPhone })
    : [];
  if (memories.length > 0) {
    // Recorded before the dial: the call is billed for its memories (lifecycle's finishCall), and the
    // conversation engine gives them to the model.
    await CallEntity.patch({ workspaceId, callId })
      .set({ memoriesUsed: true, memories })
      .go({ response: 'none' });
  }
  // The call's version of the agent: its voice, language and relay settings.
  const agent = await agentForCall(call);
  const callbackUrl = statusCallbackUrl(workspaceId, callId);
  // Answering-machine detection (the agent's `voicemail`): recorded on the call before the dial, so
  // the detection's callback and the `<Connect action>` find what to do however fast they come.
  const voicemail = agent?.voicemail?.detection ? agent.voicemail : undefined;
  if (voicemail) {
    await CallEntity.patch({ workspaceId, callId })
      .set({
        voicemailAction: voicemail.action,
        ...(voicemail.action === 'leave_message' && voicemail.message
          ? { voicemailMessage: renderTemplate(voicemail.message, parameters) }
          : {}),
      })
      .go({ response: 'none' });
  }
  let providerCallId: string;
  try {
    ({ providerCallId } = await port.placeCall({
      from: call.fromPhone,
      to: call.toPhone,
      statusCallbackUrl: callbackUrl,
      maxDurationSeconds: call.maxDurationSeconds,
      script: {
        callId,
        workspaceId,
        greeting: renderTemplate(call.greeting, parameters),
        record: call.record,
        recordingCallbackUrl: callbackUrl,
        relay: relaySettings(agent ?? DEFAULT_RELAY_AGENT, { callId, workspaceId }),
      },
      ...(voicemail
        ? {
            machineDetection: {
              mode: voicemail.action === 'leave_message' ? 'DetectMessageEnd' : 'Enable',
              callbackUrl: amdCallbackUrl(workspaceId, callId),
            },
          }
        : {}),
    }));
  } catch (error) {
    logger.error('dial failed; the call fails (it is never dialled twice)', { callId, error: String(error) });
    await applyTransition(workspaceId, callId, {
      status: 'failed',
      endReason: 'failed',
      source: 'dispatcher',
    });
    return 'failed';
  }

  const { data: updated } = await CallEntity.patch({ workspaceId, callId })
    .set({
      provider: port.name,
      providerCallId,
      // The voice relay reports the conversation when its session ends.
      transcriptExpected: true,
      updatedAt: clock.now().toISOString(),
    })
    .go({ response: 'all_new' });
  if (updated && isTerminal(updated.status)) {
    // Hung up (or swept) while it was being dialled: end it at the provider too.
    await port
      .hangupCall(providerCallId)
      .catch((error: unknown) => logger.warn('provider hangup failed', { callId, error: String(error) }));
  }
  return 'dialled';
}
