import type { TestChatGrant } from '../../agents/test-chat.js';
import { agentForCall } from '../../agents/versions.js';
import { CallEntity, CallStatusEventEntity, type Call } from '../../calling/entities.js';
import { readCall } from '../../calling/lifecycle.js';
import { RANK } from '../../calling/status.js';
import { webCallNotConnected } from '../../calling/web-call.js';
import { Service } from '../../platform/entity.js';
import { logger } from '../../platform/logger.js';
import { entityConfig } from '../../platform/table.js';
import { callTools, conversationSetup } from '../setup.js';
import { CallToolsEntity, callToolsItem } from '../storage/call-tools.js';
import { ConversationEntity, newConversation } from '../storage/entities.js';
import { callKey } from '../../calling/call-shards.js';

/**
 * A browser voice call's `$connect` on the relay's web route (the `browser` transport of
 * calling/web-call.ts): the page plays ConversationRelay's part (the browser's speech recognition
 * and synthesis) and speaks the test chat's frames. Its ticket, spent by the test chat's `$connect`
 * (web-chat.ts, which checked its buyer's role again), names the call created already. The call must
 * be that user's web call of that agent, still `created` within its minute: one transaction then
 * creates the conversation (channel `web`: the socket is ours to close, and closing it ends the call)
 * and moves the call to `inprogress`, conditioned on it still waiting (the sweeper's `not_connected`
 * and this cannot both happen). The model is told to speak as on a phone call.
 */

const webCallService = new Service(
  {
    conversation: ConversationEntity,
    callTools: CallToolsEntity,
    call: CallEntity,
    callStatusEvent: CallStatusEventEntity,
  },
  entityConfig(),
);

/** As the test chat's: a day, so the item outlives API Gateway's 2-hour connections. */
const TTL_SECONDS = 24 * 3600;

/** `$connect` of a browser voice call: 200 when connected, else the status refusing the upgrade. */
export async function acceptWebCall(
  connectionId: string,
  grant: TestChatGrant & { callId: string },
): Promise<number> {
  const call = await readCall(grant.workspaceId, grant.callId);
  if (!call || !waitingFor(call, grant)) {
    logger.info('web call refused: not a call waiting for this browser', {
      connectionId,
      callId: grant.callId,
    });
    return 404;
  }
  const now = new Date();
  if (webCallNotConnected(call, now)) {
    logger.info('web call refused: past its minute', { connectionId, callId: call.callId });
    return 410;
  }
  const agent = await agentForCall(call);
  if (!agent) return 404;
  const at = now.toISOString();
  const connected: Call = { ...call, relayConnectionId: connectionId };
  const setup = conversationSetup({ call: connected, agent, channel: 'phone', now, timeScale: 1 });
  const tools = callTools(connected, agent, 'web');
  const expiresAt = Math.floor(now.getTime() / 1000) + TTL_SECONDS;
  const { workspaceId, callId } = call;
  const result = await webCallService.transaction
    .write((entities) => [
      entities.call
        .patch(callKey(workspaceId, callId))
        .set({
          status: 'inprogress',
          statusRank: RANK.inprogress,
          connectedAt: at,
          inprogressAt: at,
          updatedAt: at,
          relayConnectionId: connectionId,
        })
        .where(
          (attr, op) =>
            `${op.eq(attr.statusRank, RANK.created)} AND ${op.notExists(attr.relayConnectionId)} AND ` +
            op.notExists(attr.providerCallId),
        )
        .commit(),
      ...(['connected', 'inprogress'] as const).map((status) =>
        entities.callStatusEvent
          .create({ callId, workspaceId, rank: RANK[status], status, at, source: 'api', recordedAt: at })
          .commit(),
      ),
      ...(tools ? [entities.callTools.create(callToolsItem(connectionId, tools, expiresAt)).commit()] : []),
      entities.conversation
        .create(
          newConversation({
            connectionId,
            workspaceId,
            callId,
            channel: 'web',
            setup,
            createdAt: at,
            expiresAt,
          }),
        )
        .commit(),
    ])
    .go();
  if (result.canceled) {
    logger.info('web call refused: connected or ended meanwhile', { connectionId, callId });
    return 409;
  }
  logger.info('web call connected', { connectionId, callId, workspaceId });
  return 200;
}

/** The ticket's call: a web call of its workspace, agent and buyer, still waiting to be connected. */
function waitingFor(call: Call, grant: TestChatGrant): boolean {
  return (
    call.channel === 'web' &&
    call.status === 'created' &&
    call.agentId === grant.agentId &&
    call.createdBy === grant.userId &&
    !call.providerCallId &&
    !call.relayConnectionId
  );
}
