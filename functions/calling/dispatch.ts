import { isConditionFailure } from '../platform/table.js';
import { renderTemplate } from '../agents/template.js';
import { clock } from '../platform/clock.js';
import { logger } from '../platform/logger.js';
import { providerWebhookUrl } from '../platform/webhook-urls.js';
import { telephony, VOICE_WEBHOOK_PATH } from '../providers/telephony/index.js';
import { agentForCall } from '../agents/versions.js';
import type { StatusCallbackEvent } from '../providers/telephony/index.js';
import { CallEntity, callingService, type Call } from './entities.js';
import { dialSettingsOf, relayAgentOf, type DialSettings } from './dial.js';
import { DEFAULT_RELAY_AGENT, relaySettings } from './relay-settings.js';
import { applyTransition } from './lifecycle.js';
import { isTerminal, RANK } from './status.js';
import { callKey } from './call-shards.js';

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

/**
 * What the provider reports to our status callback (Twilio's `StatusCallbackEvent`): the answer and
 * the end — what moves the call (status.ts). Not `initiated` nor `ringing`: the dispatcher itself
 * moves the call to `initiated` once the provider has taken it (in the write that records the
 * provider's id), and ringing is not a status of ours; each would be a callback and requests for
 * nothing.
 */
export const STATUS_CALLBACK_EVENTS: readonly StatusCallbackEvent[] = ['answered', 'completed'];

/**
 * Dials a call: claims it, asks the provider to dial it, and records the provider's call id. What the
 * dial needs comes with the claim (ALL_NEW): the call keeps its agent's relay settings, voicemail
 * detection and memories switch from its creation (`dial`, dial.ts), so the agent is read only for a
 * call made before that (or when its agent uses conversation memories: the memories source reads it).
 */
export async function dispatchCall(
  workspaceId: string,
  callId: string,
  options: { memories?: MemoriesSource } = {},
): Promise<DispatchOutcome> {
  let call: Call;
  try {
    const { data } = await CallEntity.patch(callKey(workspaceId, callId))
      .set({ status: 'dialling', statusRank: RANK.dialling, dispatchedAt: clock.now().toISOString() })
      .where((attr, op) => op.eq(attr.status, 'created'))
      .go({ response: 'all_new' });
    call = data as Call;
  } catch (error) {
    if (isConditionFailure(error)) return 'skipped'; // already claimed, ended, or unknown
    throw error;
  }

  const port = telephony();
  const parameters = (call.parameters ?? {}) as Record<string, string>;
  const dial = call.dial ?? (await dialOfAgent(call, parameters));
  const memories =
    options.memories && dial.memories === true
      ? await options.memories({ workspaceId, agentId: call.agentId, callId, phone: call.toPhone })
      : [];
  if (memories.length > 0) {
    // Recorded before the dial: the call is billed for its memories (lifecycle's finishCall), and the
    // conversation engine gives them to the model.
    await CallEntity.patch(callKey(workspaceId, callId))
      .set({ memoriesUsed: true, memories })
      .go({ response: 'none' });
  }
  const callbackUrl = statusCallbackUrl(workspaceId, callId);
  // Answering-machine detection (the agent's `voicemail`): what to do on a machine is on the call since
  // its creation, so the detection's callback and the `<Connect action>` find it however fast they come.
  const machineDetection = call.voicemailAction ? dial.machineDetection : undefined;
  let providerCallId: string;
  try {
    ({ providerCallId } = await port.placeCall({
      from: call.fromPhone,
      to: call.toPhone,
      statusCallbackUrl: callbackUrl,
      statusCallbackEvents: STATUS_CALLBACK_EVENTS,
      maxDurationSeconds: call.maxDurationSeconds,
      script: {
        callId,
        workspaceId,
        agent: { agentId: call.agentId, version: call.agentVersion },
        greeting: renderTemplate(call.greeting, parameters),
        record: call.record,
        recordingCallbackUrl: callbackUrl,
        relay: relaySettings(relayAgentOf(dial), { callId, workspaceId }),
      },
      ...(machineDetection
        ? { machineDetection: { mode: machineDetection, callbackUrl: amdCallbackUrl(workspaceId, callId) } }
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

  const stored = await recordDialled(call, port.name, providerCallId);
  if (stored && isTerminal(stored.status)) {
    // Hung up (or swept) while it was being dialled: end it at the provider too.
    await port
      .hangupCall(providerCallId)
      .catch((error: unknown) => logger.warn('provider hangup failed', { callId, error: String(error) }));
  }
  return 'dialled';
}

/**
 * Records the provider's call id on the call and, when the call is still as the claim left it, moves it
 * to `initiated` (the provider has taken it) with its status event — one transaction. When a callback
 * came first (the answer, an end) or the call was hung up meanwhile, only the id is recorded. Returns
 * the call as it stands after, or undefined when it is known to be only `initiated`.
 */
async function recordDialled(
  call: Call,
  provider: 'simulator' | 'twilio',
  providerCallId: string,
): Promise<Call | undefined> {
  const { workspaceId, callId } = call;
  // The voice relay reports the conversation when its session ends.
  const dialled = { provider, providerCallId, transcriptExpected: true } as const;
  for (let attempt = 0; attempt < 8; attempt += 1) {
    const now = clock.now().toISOString();
    const result = await callingService.transaction
      .write(({ call: calls, callStatusEvent }) => [
        calls
          .patch(callKey(workspaceId, callId))
          .set({
            ...dialled,
            status: 'initiated',
            statusRank: RANK.initiated,
            initiatedAt: now,
            updatedAt: now,
          })
          .where((attr, op) => op.eq(attr.statusRank, RANK.dialling))
          .commit(),
        callStatusEvent
          .create({
            callId,
            workspaceId,
            rank: RANK.initiated,
            status: 'initiated',
            at: now,
            source: 'dispatcher',
            recordedAt: now,
          })
          .commit(),
      ])
      .go();
    if (!result.canceled) return undefined;
    if (!result.data.some((d) => d.code === 'ConditionalCheckFailed')) {
      await new Promise((r) => setTimeout(r, 10 * (attempt + 1))); // a transaction conflict
      continue;
    }
    // Moved on meanwhile: the id alone, and whether it ended.
    const { data } = await CallEntity.patch(callKey(workspaceId, callId))
      .set({ ...dialled, updatedAt: now })
      .go({ response: 'all_new' });
    return data as Call;
  }
  throw new Error(`call ${callId}: the provider's call id could not be recorded`);
}

/** What dialling needs, from the agent's version, for a call made before calls kept it. */
async function dialOfAgent(call: Call, parameters: Record<string, string>): Promise<DialSettings> {
  const agent = await agentForCall(call);
  if (!agent) return { ...DEFAULT_RELAY_AGENT.settings };
  const dial = dialSettingsOf(agent);
  const voicemail = agent.voicemail?.detection ? agent.voicemail : undefined;
  if (voicemail) {
    const set = {
      voicemailAction: voicemail.action,
      ...(voicemail.action === 'leave_message' && voicemail.message
        ? { voicemailMessage: renderTemplate(voicemail.message, parameters) }
        : {}),
    };
    await CallEntity.patch(callKey(call.workspaceId, call.callId)).set(set).go({ response: 'none' });
    Object.assign(call, set);
  }
  return dial;
}
