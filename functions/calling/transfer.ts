import { AgentEntity, DEFAULT_AGENT_LANGUAGE } from '../agents/entities.js';
import { isId } from '../platform/ids.js';
import { logger } from '../platform/logger.js';
import { isConditionFailure } from '../platform/table.js';
import { providerWebhookUrl } from '../platform/webhook-urls.js';
import { telephony } from '../providers/telephony/index.js';
import {
  emptyTwiml,
  relayEndedTwiml,
  sayAndHangupTwiml,
  transferStatus,
  warmDialTwiml,
  whisperTwiml,
  type TransferStatus,
} from '../providers/telephony/twilio-format.js';
import { CallEntity, type Call } from './entities.js';
import { readCall } from './lifecycle.js';
import { isTerminal } from './status.js';
import { callKey } from './call-shards.js';

/**
 * Warm transfers at the provider (docs/voice-runtime.md "Transfers"). When the agent handed the call
 * over (`transfer_call`), the conversation stored the transfer on the call before the relay session
 * ended: for a warm one, the summary and the whisper (conversation/transfer.ts). The `<Connect
 * action>` (relay-ended.ts) then answers `<Dial action=…/transfer-status><Number url=…/whisper>`:
 *
 * - `POST /webhooks/telephony/whisper?call_id=…&workspace_id=…`: asked by the person's new leg once
 *   they answer. Its own CallSid is the new leg's: the call is matched by the call id in the URL and
 *   the request's `ParentCallSid` (the caller's call). Answers `<Say>` with the whisper stored on the
 *   call (with PII redaction on, `liveWhisper`: the real values, removed with the dial's outcome); it
 *   changes nothing (a repeated request hears the same).
 * - `POST /webhooks/telephony/transfer-status?call_id=…&workspace_id=…`: the `<Dial action>`, asked on
 *   the caller's call when the dial ended (`DialCallStatus`). Records `transfer.status` once
 *   (connected, no_answer, busy, failed); not connected, the caller hears one short line and the call
 *   ends (its end reason becomes `transfer_failed`, lifecycle.ts).
 *
 * Both are signed like every provider webhook (401 unsigned, nothing read); a request for an unknown or
 * ended call, another provider call or a call without a warm transfer is answered 200 and changes nothing.
 */

export const WHISPER_PATH = '/webhooks/telephony/whisper' as const;
export const TRANSFER_STATUS_PATH = '/webhooks/telephony/transfer-status' as const;

/** What the caller hears when the person did not answer, was busy or could not be dialled. */
export const TRANSFER_FAILED_LINE =
  "I'm sorry, no one could take your call just now. We'll get back to you soon. Goodbye.";

export interface TransferWebhookRequest {
  url: string;
  query: Record<string, string>;
  params: Record<string, string>;
  signature?: string;
}

export interface TwimlAnswer {
  status: number;
  contentType: string;
  body: string;
}

const twiml = (body: string): TwimlAnswer => ({ status: 200, contentType: 'text/xml', body });
const unauthorised = (): TwimlAnswer => ({
  status: 401,
  contentType: 'application/json',
  body: JSON.stringify({ error: 'Unauthorized' }),
});

function callUrl(path: typeof WHISPER_PATH | typeof TRANSFER_STATUS_PATH, call: Call): string {
  const url = new URL(providerWebhookUrl(path));
  url.searchParams.set('call_id', call.callId);
  url.searchParams.set('workspace_id', call.workspaceId);
  return url.toString();
}

/**
 * The `<Connect action>`'s answer when the agent handed the call over: a warm transfer dials the person
 * with the whisper first and the dial's end reported; a cold one (or a warm one whose handoff was not
 * stored) just dials.
 */
export function transferTwiml(call: Call): string | undefined {
  if (call.agentEnded !== 'transfer' || !call.transferTo) return undefined;
  if (call.transfer?.mode === 'warm')
    return warmDialTwiml(call.transferTo, callUrl(WHISPER_PATH, call), callUrl(TRANSFER_STATUS_PATH, call));
  return relayEndedTwiml(call.transferTo);
}

/** The call the request names, when it has a warm transfer under way or done; else undefined. */
async function warmCall(query: Record<string, string>): Promise<Call | undefined> {
  const { call_id: callId, workspace_id: workspaceId } = query;
  const call =
    callId && workspaceId && isId('call', callId) && isId('workspace', workspaceId)
      ? await readCall(workspaceId, callId)
      : undefined;
  if (!call || call.agentEnded !== 'transfer' || call.transfer?.mode !== 'warm' || !call.providerCallId)
    return undefined;
  return call;
}

async function languageOf(call: Call): Promise<string> {
  const { data } = await AgentEntity.get({ workspaceId: call.workspaceId, agentId: call.agentId }).go({
    attributes: ['language'],
  });
  return data?.language ?? DEFAULT_AGENT_LANGUAGE;
}

/** `<Number url>`: what the person hears before being connected. */
export async function answerWhisper(request: TransferWebhookRequest): Promise<TwimlAnswer> {
  if (!(await telephony().verifySignature(request.url, request.params, request.signature)))
    return unauthorised();
  const call = await warmCall(request.query);
  if (!call || request.params.ParentCallSid !== call.providerCallId) {
    logger.warn('whisper for an unknown call or another provider call; ignored', {
      callId: request.query.call_id,
    });
    return twiml(emptyTwiml());
  }
  if (isTerminal(call.status) || call.transfer?.status) {
    logger.info('whisper after the call or its dial ended; ignored', { callId: call.callId });
    return twiml(emptyTwiml());
  }
  // The real values when the call's redaction stored the whisper with tokens (conversation/transfer.ts).
  const text = (call.liveWhisper ?? call.transfer?.whisper ?? call.transfer?.summary ?? '').trim();
  logger.info('whisper answered', { callId: call.callId, words: text.split(/\s+/).filter(Boolean).length });
  if (!text) return twiml(emptyTwiml());
  return twiml(whisperTwiml(text, await languageOf(call)));
}

/** `<Dial action>`: how the dial to the person ended. */
export async function answerTransferStatus(request: TransferWebhookRequest): Promise<TwimlAnswer> {
  if (!(await telephony().verifySignature(request.url, request.params, request.signature)))
    return unauthorised();
  const call = await warmCall(request.query);
  if (!call || request.params.CallSid !== call.providerCallId) {
    logger.warn('transfer status for an unknown call or another provider call; ignored', {
      callId: request.query.call_id,
    });
    return twiml(emptyTwiml());
  }
  const status = transferStatus(request.params.DialCallStatus);
  if (!status) {
    logger.warn('transfer status without a dial outcome; ignored', { callId: call.callId });
    return twiml(emptyTwiml());
  }
  if (isTerminal(call.status)) {
    logger.info('transfer status after the call ended; ignored', { callId: call.callId });
    return twiml(emptyTwiml());
  }
  const recorded = call.transfer?.status ?? (await recordStatus(call, status));
  logger.info('transfer dial ended', { callId: call.callId, status: recorded });
  if (recorded === 'connected') return twiml(relayEndedTwiml());
  return twiml(sayAndHangupTwiml(TRANSFER_FAILED_LINE, await languageOf(call)));
}

/** Records the dial's outcome once (conditioned on none there); a concurrent duplicate's stands. */
async function recordStatus(call: Call, status: TransferStatus): Promise<TransferStatus> {
  const transfer = call.transfer!;
  try {
    const patch = CallEntity.patch(callKey(call.workspaceId, call.callId)).set({
      transfer: { ...transfer, status },
    });
    // The whisper's real values go with the dial's end (PII redaction on), in the same write.
    await (call.liveWhisper !== undefined ? patch.remove(['liveWhisper']) : patch)
      .where(
        (attr, op) =>
          `${op.notExists(attr.transfer.status)} AND ${op.eq(attr.providerCallId, call.providerCallId as string)}`,
      )
      .go({ response: 'none' });
    return status;
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
    const again = await readCall(call.workspaceId, call.callId);
    return again?.transfer?.status ?? status;
  }
}
