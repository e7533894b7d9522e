import { agentForCall, agentForCallWith } from '../../agents/versions.js';
import { callKey } from '../../calling/call-shards.js';
import { CallEntity, type Call } from '../../calling/entities.js';
import { applyTransition, readCall } from '../../calling/lifecycle.js';
import { canMove, isTerminal } from '../../calling/status.js';
import { closeConnection } from '../../platform/connections.js';
import { logger } from '../../platform/logger.js';
import type { TableKey } from '../../platform/table.js';
import { telephony } from '../../providers/telephony/index.js';
import { callToolsItem } from '../storage/call-tools.js';
import { conversationService, newConversation } from '../storage/entities.js';
import { handoffTargets } from '../handoffs.js';
import { callTools, conversationSetup } from '../setup.js';
import { recordWithoutSession } from '../voicemail.js';

/**
 * A phone call's session begins: the provider's setup names the call (and the agent and version our
 * TwiML gave it); the call must be live, the provider's, and without a session yet. The conversation,
 * the call's tools and the call's link to the session are one transaction.
 */

/** A day: API Gateway closes a connection after 2 hours; the item outlives it for late frames. */
const CONVERSATION_TTL_SECONDS = 24 * 3600;

export interface PhoneSessionSetup {
  callSid: string;
  callId: string;
  workspaceId: string;
  /** The agent and version the call speaks with, as our TwiML named them (checked against the call). */
  named?: { agentId: string; agentVersion?: number };
}

/** A session refused before it began: the socket is closed. */
export async function refuseSession(
  connectionId: string,
  reason: string,
  context: Record<string, unknown> = {},
): Promise<void> {
  logger.warn(`relay session refused: ${reason}`, { connectionId, ...context });
  await closeConnection(connectionId);
}

/** A machine answered before the session began: none begins; the call keeps what it will hear. */
async function refuseOnMachine(connectionId: string, call: Call): Promise<void> {
  await refuseSession(connectionId, 'answered by a machine', { callId: call.callId });
  await recordWithoutSession(call);
}

export async function openPhoneSession(connectionId: string, given: PhoneSessionSetup): Promise<void> {
  const { callSid, callId, workspaceId, named } = given;
  const read = named
    ? await agentForCallWith(CallEntity.get(callKey(workspaceId, callId)).params<{ Key: TableKey }>().Key, {
        workspaceId,
        ...named,
      })
    : undefined;
  const call = read
    ? ((read.other ? (CallEntity.parse({ Item: read.other }).data as Call | null) : null) ?? undefined)
    : await readCall(workspaceId, callId);
  if (!call) return refuseSession(connectionId, 'unknown call');
  if (call.providerCallId !== callSid)
    return refuseSession(connectionId, "callSid is not the call's", { callId });
  if (isTerminal(call.status)) return refuseSession(connectionId, 'the call is not live', { callId });
  if (call.relayConnectionId)
    return refuseSession(connectionId, 'the call already has a session', { callId });
  // Answered by a machine before the session began: no conversation (the `<Connect action>` leaves
  // the voicemail or hangs up).
  if (call.answeredBy === 'machine') return refuseOnMachine(connectionId, call);
  // The agent's version the call was created with, never the agent as it is now (a PATCH since the
  // dial must not mix two versions).
  const agent =
    read && named?.agentId === call.agentId && named.agentVersion === call.agentVersion
      ? read.agent
      : await agentForCall(call);
  if (!agent) return refuseSession(connectionId, 'the agent is gone', { callId });

  const now = new Date();
  const [timeScale, handoffs] = await Promise.all([
    telephony().callSecondsPerWallSecondOf(callSid),
    handoffTargets(agent),
  ]);
  const setup = conversationSetup({ call, agent, channel: 'phone', now, timeScale, handoffs });
  const tools = callTools(call, agent, 'phone');
  const expiresAt = Math.floor(now.getTime() / 1000) + CONVERSATION_TTL_SECONDS;
  const result = await conversationService.transaction
    .write(({ conversation, call: calls, callTools: toolItems }) => [
      ...(tools ? [toolItems.create(callToolsItem(connectionId, tools, expiresAt)).commit()] : []),
      conversation
        .create(
          newConversation({
            connectionId,
            workspaceId,
            callId,
            channel: 'phone',
            providerCallId: callSid,
            setup,
            createdAt: now.toISOString(),
            expiresAt,
          }),
        )
        .commit(),
      calls
        .patch(callKey(workspaceId, callId))
        .set({ relayConnectionId: connectionId })
        .where(
          (attr, op) =>
            `${op.notExists(attr.relayConnectionId)} AND ${op.eq(attr.providerCallId, callSid)} AND ` +
            `(${op.notExists(attr.answeredBy)} OR ${op.ne(attr.answeredBy, 'machine')})`,
        )
        .commit(),
    ])
    .go();
  if (result.canceled) {
    const again = await readCall(workspaceId, callId);
    if (again?.answeredBy === 'machine' && !again.relayConnectionId)
      return refuseOnMachine(connectionId, again);
    return refuseSession(connectionId, 'the call already has a session', { callId });
  }
  logger.info('relay session started', { connectionId, callId, workspaceId });
  // The conversation has begun: the call is in progress (a provider callback may say so too; when
  // one already had as the session's setup read the call, there is nothing to move, nor to read again).
  if (!canMove(call.status, 'inprogress')) return;
  await applyTransition(workspaceId, callId, { status: 'inprogress', source: 'provider' }).catch(
    (error: unknown) => logger.warn('call not moved to inprogress', { callId, error: String(error) }),
  );
}
