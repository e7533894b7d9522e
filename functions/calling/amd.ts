import { isId } from '../platform/ids.js';
import { logger } from '../platform/logger.js';
import { isConditionFailure } from '../platform/table.js';
import { telephony } from '../providers/telephony/index.js';
import { answeredBy } from '../providers/telephony/twilio-format.js';
import { CallEntity, type Call } from './entities.js';
import { readCall } from './lifecycle.js';
import { isTerminal } from './status.js';
import { callKey } from './call-shards.js';

/**
 * `POST /webhooks/telephony/amd?call_id=…&workspace_id=…`: the provider's asynchronous
 * answering-machine detection result of an outbound call (Twilio `AnsweredBy`). Signed like every
 * provider webhook (401 unsigned, nothing read). The result is recorded once on the call (`answered_by`,
 * conditioned on none being there): a duplicate, a late one (the call ended), one for an unknown call
 * or one from another provider call changes nothing and is answered 200. On a machine, `onMachine` (the
 * conversation's stop, handed in by the entry point: conversation/ sits above calling) stops the
 * agent and ends the relay session; the `<Connect action>` (relay-ended.ts) then leaves the message or
 * hangs up. `unknown`: the call goes on.
 */
export interface AmdRequest {
  url: string;
  query: Record<string, string>;
  params: Record<string, string>;
  signature?: string;
}

/** The call was just found to be answered by a machine: stop the agent (it may have no session yet). */
export type OnMachine = (call: Call) => Promise<void>;

const ok = () => ({
  status: 200,
  contentType: 'text/xml',
  body: '<?xml version="1.0" encoding="UTF-8"?><Response/>',
});

export async function handleAmdCallback(
  request: AmdRequest,
  options: { onMachine?: OnMachine } = {},
): Promise<{ status: number; contentType: string; body: string }> {
  if (!(await telephony().verifySignature(request.url, request.params, request.signature)))
    return { status: 401, contentType: 'application/json', body: JSON.stringify({ error: 'Unauthorized' }) };
  const { call_id: callId, workspace_id: workspaceId } = request.query;
  const call =
    callId && workspaceId && isId('call', callId) && isId('workspace', workspaceId)
      ? await readCall(workspaceId, callId)
      : undefined;
  if (!call || call.direction !== 'outbound' || !call.voicemailAction) {
    logger.warn('AMD callback for an unknown or unchecked call; ignored', { callId });
    return ok();
  }
  if (!call.providerCallId || call.providerCallId !== request.params.CallSid) {
    logger.warn('AMD callback from another provider call; ignored', { callId });
    return ok();
  }
  if (call.answeredBy || isTerminal(call.status)) {
    logger.info('AMD callback after the result or the end; ignored', { callId, status: call.status });
    return ok();
  }
  const result = answeredBy(request.params.AnsweredBy);
  let marked: Call;
  try {
    const { data } = await CallEntity.patch(callKey(call.workspaceId, call.callId))
      .set({ answeredBy: result })
      .where(
        (attr, op) =>
          `${op.notExists(attr.answeredBy)} AND ${op.eq(attr.providerCallId, call.providerCallId as string)}`,
      )
      .go({ response: 'all_new' });
    marked = { ...call, ...(data as Partial<Call>) } as Call;
  } catch (error) {
    if (isConditionFailure(error)) return ok(); // a concurrent duplicate recorded it first
    throw error;
  }
  logger.info('answering-machine detection', { callId: call.callId, answeredBy: result });
  if (result === 'machine' && !isTerminal(marked.status) && options.onMachine) {
    await options
      .onMachine(marked)
      .catch((error: unknown) =>
        logger.error('the agent was not stopped on a machine', { callId: call.callId, error: String(error) }),
      );
  }
  return ok();
}
