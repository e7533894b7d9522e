import { WorkspaceEntity } from '../../access/entities.js';
import { callPiiRedaction } from '../../calling/pii.js';
import { AgentEntity } from '../../agents/entities.js';
import { agentAsOf, findAgentVersion } from '../../agents/versions.js';
import { BillingAccountEntity } from '../../billing/entities.js';
import { callOpeningWrites } from '../../calling/call-opening.js';
import { CallEntity, CallStatusEventEntity, OpenCallEntity, type Call } from '../../calling/entities.js';
import { shardOf } from '../../calling/start-call.js';
import { deadlineFor, RANK } from '../../calling/status.js';
import { Service } from '../../platform/entity.js';
import { HttpError } from '../../platform/errors.js';
import { newId } from '../../platform/ids.js';
import { logger } from '../../platform/logger.js';
import { spendTestChatTicket, type TestChatGrant } from '../../agents/test-chat.js';
import { requireWorkspace } from '../../access/workspace-access.js';
import type { UserPrincipal } from '../../platform/auth/principal.js';
import { entityConfig } from '../../platform/table.js';
import { ConversationEntity, newConversation } from '../storage/entities.js';
import { handoffTargets } from '../handoffs.js';
import { callTools, conversationSetup } from '../setup.js';
import { CallToolsEntity, callToolsItem } from '../storage/call-tools.js';
import { acceptWebCall } from './web-call.js';
import { callShardOf } from '../../calling/call-shards.js';

/**
 * The dashboard's test chat: a user talks to an agent in the browser, over the same relay WebSocket and
 * the same engine as a phone call. The upgrade carries `channel=web` and a one-time `ticket` the user
 * bought with their token (agents/test-chat.ts: a browser cannot set headers on a WebSocket, and a
 * token never goes in a URL, so any `access_token` there is refused). The ticket is spent here: it names
 * the workspace, the agent, the user, the chat's `parameters` and whether its post-call actions run.
 * The organisation must have credits and the workspace a free concurrency slot. The session is a call
 * like any other (`channel: web`, inbound to the agent, no recording): it is in the call log, metered
 * as call handling and analysed; its post-call actions run only when the ticket asked for them.
 */
export interface WebChatQuery {
  channel?: string;
  ticket?: string;
  access_token?: string;
}

const webChatService = new Service(
  {
    conversation: ConversationEntity,
    callTools: CallToolsEntity,
    call: CallEntity,
    callStatusEvent: CallStatusEventEntity,
    openCall: OpenCallEntity,
    workspace: WorkspaceEntity,
  },
  entityConfig(),
);

/** A day: the item outlives API Gateway's 2-hour connections for late frames. */
const TTL_SECONDS = 24 * 3600;
/** A test chat lasts at most this long (the agent's own limit if shorter). */
const MAX_WEB_SECONDS = 3600;

/** `$connect` of a test chat: 2xx creates the call and its conversation; otherwise the HTTP status refusing it. */
export async function acceptWebChat(connectionId: string, query: WebChatQuery): Promise<number> {
  // A token in a URL is refused whatever it is: it would be logged on its way in.
  if (query.access_token !== undefined) {
    logger.info('test chat refused: a token in the URL', { connectionId });
    return 401;
  }
  const grant = await spendTestChatTicket(query.ticket ?? '');
  if (!grant) {
    logger.info('test chat refused: an unknown, used or expired ticket', { connectionId });
    return 401;
  }
  const { workspaceId, organisationId } = grant;
  // The buyer may have lost the right since (made a viewer, or removed) within the ticket's minute.
  const stillAllowed = await buyerMayChat(grant);
  if (stillAllowed !== true) {
    logger.info('test chat refused: its buyer may no longer chat here', {
      connectionId,
      status: stillAllowed,
    });
    return stillAllowed;
  }
  // A browser voice call's ticket names its call, created already (web-call.ts).
  if (grant.callId) return acceptWebCall(connectionId, { ...grant, callId: grant.callId });
  try {
    const { data: live } = await AgentEntity.get({ workspaceId, agentId: grant.agentId }).go();
    if (!live) return 404;
    // A chat with an earlier version runs that version (the ticket checked it exists).
    const version =
      grant.agentVersion !== undefined
        ? await findAgentVersion(workspaceId, live.agentId, grant.agentVersion)
        : undefined;
    if (grant.agentVersion !== undefined && !version) return 404;
    const agent = version ? agentAsOf(live, version) : live;
    const { data: billing } = await BillingAccountEntity.get({ organisationId }).go();
    if (!billing || billing.balanceUnits <= 0 || billing.agentsSuspended) return 402;

    const now = new Date();
    const at = now.toISOString();
    const callId = newId('call');
    const maxSeconds = Math.min(agent.settings.maxDurationSeconds, MAX_WEB_SECONDS);
    const call: Call = {
      workspaceId,
      callId,
      callShard: callShardOf(callId),
      organisationId,
      agentId: agent.agentId,
      direction: 'inbound',
      channel: 'web',
      toPhone: agent.phoneNumber ?? 'web',
      fromPhone: 'web',
      record: false,
      parameters: grant.parameters,
      runPostCallActions: grant.runPostCallActions,
      status: 'inprogress',
      statusRank: RANK.inprogress,
      createdBy: grant.userId,
      createdAt: at,
      initiatedAt: at,
      connectedAt: at,
      inprogressAt: at,
      agentName: agent.name,
      // The agent was read once: the call's snapshot and its setup are this one version.
      ...(agent.version !== undefined ? { agentVersion: agent.version } : {}),
      ...callPiiRedaction(agent),
      greeting: agent.greeting,
      prompt: agent.prompt,
      maxDurationSeconds: maxSeconds,
      deadlineAt: deadlineFor(at, maxSeconds),
      openShard: shardOf(callId),
      transcriptExpected: true,
      relayConnectionId: connectionId,
    };
    const handoffs = await handoffTargets(agent);
    const setup = conversationSetup({ call, agent, channel: 'web', now, timeScale: 1, handoffs });
    const tools = callTools(call, agent, 'web');
    const expiresAt = Math.floor(now.getTime() / 1000) + TTL_SECONDS;
    const result = await webChatService.transaction
      .write((entities) => [
        ...callOpeningWrites(entities, call, 'api'),
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
      logger.info('test chat refused: the workspace is at its concurrency limit', { workspaceId });
      return 429;
    }
    logger.info('test chat started', { connectionId, callId, workspaceId });
    return 200;
  } catch (error) {
    if (error instanceof HttpError) return error.status;
    throw error;
  }
}

/** Whether the ticket's buyer may still start a chat in its workspace: true, or 404 / 403 as the route would answer. */
async function buyerMayChat(grant: TestChatGrant): Promise<true | 403 | 404> {
  const buyer: UserPrincipal = { kind: 'user', userId: grant.userId, email: '', subject: '' };
  try {
    await requireWorkspace(buyer, grant.workspaceId, 'calls:write');
    return true;
  } catch (error) {
    if (!(error instanceof HttpError)) throw error;
    return error.status === 404 ? 404 : 403;
  }
}
