import { isId } from '../platform/ids.js';
import { logger } from '../platform/logger.js';
import { telephony } from '../providers/telephony/index.js';
import { emptyTwiml, relayEndedTwiml } from '../providers/telephony/twilio-format.js';
import { readCall } from './lifecycle.js';

/**
 * `POST /webhooks/telephony/relay-ended?call_id=…&workspace_id=…`: the `<Connect action>` of a call's
 * TwiML. The provider asks it what to do once the relay session ended: `<Dial>` the agent's transfer
 * number when the agent handed the call over (as recorded on the call by the conversation engine,
 * never what the request says), else `<Hangup/>`. Signed like every callback; a bad signature is 401.
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
  const transferTo = call.agentEnded === 'transfer' ? call.transferTo : undefined;
  logger.info('relay session ended at the provider', { callId, transfer: transferTo !== undefined });
  return { status: 200, contentType: 'text/xml', body: relayEndedTwiml(transferTo) };
}
