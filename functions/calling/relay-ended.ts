import { isId } from '../platform/ids.js';
import { logger } from '../platform/logger.js';
import { telephony } from '../providers/telephony/index.js';
import { AgentEntity, DEFAULT_AGENT_LANGUAGE } from '../agents/entities.js';
import { emptyTwiml, relayEndedTwiml, sayAndHangupTwiml } from '../providers/telephony/twilio-format.js';
import { CallEntity, type Call } from './entities.js';
import { readCall } from './lifecycle.js';
import { transferTwiml } from './transfer.js';
import { callKey } from './call-shards.js';

/**
 * `POST /webhooks/telephony/relay-ended?call_id=…&workspace_id=…`: the `<Connect action>` of a call's
 * TwiML. The provider asks it what to do once the relay session ended: `<Dial>` the agent's transfer
 * number when the agent handed the call over (as recorded on the call by the conversation engine,
 * never what the request says; a warm transfer with the whisper first and the dial's end reported,
 * transfer.ts), else `<Hangup/>`. Signed like every callback; a bad signature is 401.
 */
export async function answerRelayEnded(request: {
  url: string;
  query: Record<string, string>;
  params: Record<string, string>;
  signature?: string;
}): Promise<{ status: number; body: string; contentType: string }> {
  if (!(await telephony().verifySignature(request.url, request.params, request.signature)))
    return { status: 401, contentType: 'application/json', body: JSON.stringify({ error: 'Unauthorized' }) };
  const { call_id: callId, workspace_id: workspaceId } = request.query;
  const call =
    callId && workspaceId && isId('call', callId) && isId('workspace', workspaceId)
      ? await readCall(workspaceId, callId)
      : undefined;
  if (
    !call ||
    (call.providerCallId && request.params.CallSid && call.providerCallId !== request.params.CallSid)
  ) {
    logger.warn('relay-ended for an unknown call', { callId });
    return { status: 200, contentType: 'text/xml', body: emptyTwiml() };
  }
  if (call.answeredBy === 'machine')
    return { status: 200, contentType: 'text/xml', body: await voicemailTwiml(call) };
  const transfer = transferTwiml(call);
  logger.info('relay session ended at the provider', {
    callId,
    transfer: transfer ? (call.transfer?.mode ?? 'cold') : null,
  });
  return { status: 200, contentType: 'text/xml', body: transfer ?? relayEndedTwiml() };
}

/**
 * A machine answered: the message is said (`<Say>`, in the agent's language: Twilio's own voices, see
 * docs/voice-runtime.md) and the call hung up, or it is just hung up. The call records that the message
 * was left (a repeated request says it again, as the provider asked).
 */
async function voicemailTwiml(call: Call): Promise<string> {
  const message = call.voicemailAction === 'leave_message' ? call.voicemailMessage?.trim() : undefined;
  logger.info('relay session ended on a machine', { callId: call.callId, messageLeft: !!message });
  if (!message) return relayEndedTwiml();
  const [{ data: agent }] = await Promise.all([
    AgentEntity.get({ workspaceId: call.workspaceId, agentId: call.agentId }).go(),
    CallEntity.patch(callKey(call.workspaceId, call.callId))
      .set({ voicemailMessageLeft: true })
      .go({ response: 'none' }),
  ]);
  return sayAndHangupTwiml(message, agent?.language ?? DEFAULT_AGENT_LANGUAGE);
}
