import { requireWorkspace } from '../access/workspace-access.js';
import { getAgent } from '../agents/service.js';
import { issueTestChatTicket } from '../agents/test-chat.js';
import { agentAsOf, getAgentVersion } from '../agents/versions.js';
import { BillingAccountEntity } from '../billing/entities.js';
import { INSUFFICIENT_CREDITS } from '../billing/ledger.js';
import type { UserPrincipal } from '../platform/auth/principal.js';
import { clock } from '../platform/clock.js';
import { paymentRequired, tooManyRequests } from '../platform/errors.js';
import { newId } from '../platform/ids.js';
import { logger } from '../platform/logger.js';
import { webClientSettings, webClientToken } from '../providers/telephony/web-client.js';
import { callOpeningWrites } from './call-opening.js';
import { callingService, type Call } from './entities.js';
import type { WebCallBody, WebCallResponse } from './schemas.js';
import { CONCURRENCY_RETRY_AFTER_SECONDS, shardOf, TOO_MANY_CONCURRENT_CALLS } from './start-call.js';
import { deadlineFor } from './status.js';
import { callShardOf } from './call-shards.js';

/**
 * A voice call from the dashboard (`POST …/agents/{agent_id}/web-call`): the call is created at once
 * (`channel: web`, inbound to the agent, status `created`, the agent's version it runs), holding a
 * concurrency slot, and the browser is told how to connect it:
 *   - `twilio` where the deployment has a Twilio API key and TwiML App (providers/telephony/
 *     web-client.ts): an Access Token naming the call; Twilio then asks the web-call webhook
 *     (web-call-webhook.ts), which binds the client leg to the call and answers ConversationRelay;
 *   - `browser` otherwise: the test chat's one-time ticket (agents/test-chat.ts), naming the call, and
 *     the relay's web route; the page does ConversationRelay's speech itself
 *     (conversation/transports/web-call.ts connects it).
 * Not connected within WEB_CALL_CONNECT_SECONDS, the sweeper ends it `failed`, `not_connected`,
 * unbilled. Connected, it is billed by its wall-clock time at the call rate, as any call.
 */

/** How long a web call may wait to be connected. */
export const WEB_CALL_CONNECT_SECONDS = 60;

/** When a web call created at `createdAt` stops waiting to be connected. */
export const webCallConnectBy = (createdAt: string): Date =>
  new Date(Date.parse(createdAt) + WEB_CALL_CONNECT_SECONDS * 1000);

/** Whether a call is a web call still waiting to be connected past its minute. */
export const webCallNotConnected = (call: Call, now: Date): boolean =>
  call.channel === 'web' &&
  call.status === 'created' &&
  now.getTime() > webCallConnectBy(call.createdAt).getTime();

export async function createWebCall(input: {
  principal: UserPrincipal;
  workspaceId: string;
  agentId: string;
  body: WebCallBody;
}): Promise<WebCallResponse> {
  const { principal, body } = input;
  const access = await requireWorkspace(principal, input.workspaceId, 'calls:write');
  const { workspaceId } = access.workspace;
  const live = await getAgent(workspaceId, input.agentId);
  const agent = body.agent_version
    ? agentAsOf(live, await getAgentVersion(workspaceId, live.agentId, body.agent_version))
    : live;
  const { data: billing } = await BillingAccountEntity.get({ organisationId: access.organisationId }).go();
  if (!billing || billing.balanceUnits <= 0 || billing.agentsSuspended)
    throw paymentRequired(INSUFFICIENT_CREDITS);

  const now = clock.now();
  const createdAt = now.toISOString();
  const callId = newId('call');
  const parameters = body.parameters ?? {};
  const runPostCallActions = body.run_post_call_actions ?? false;
  const settings = webClientSettings();
  // The browser's way in is ready before the call is written: a call is never left without one.
  const transport = settings
    ? {
        transport: 'twilio' as const,
        token: (await webClientToken({ settings, userId: principal.userId, callId, workspaceId, now })).token,
      }
    : {
        transport: 'browser' as const,
        ticket: (
          await issueTestChatTicket({
            workspaceId,
            organisationId: access.organisationId,
            agentId: agent.agentId,
            userId: principal.userId,
            parameters,
            runPostCallActions,
            callId,
          })
        ).ticket,
        relay_url: process.env.VOICE_RELAY_URL ?? '',
      };
  const call: Call = {
    workspaceId,
    callId,
    callShard: callShardOf(callId),
    organisationId: access.organisationId,
    agentId: agent.agentId,
    direction: 'inbound',
    channel: 'web',
    toPhone: agent.phoneNumber ?? 'web',
    fromPhone: 'web',
    // Only Twilio can record the browser's leg; the browser transport has no audio on our side.
    record: settings ? agent.settings.callRecording : false,
    parameters,
    runPostCallActions,
    status: 'created',
    statusRank: 0,
    createdBy: principal.userId,
    createdAt,
    agentName: agent.name,
    ...(agent.version !== undefined ? { agentVersion: agent.version } : {}),
    greeting: agent.greeting,
    prompt: agent.prompt,
    maxDurationSeconds: agent.settings.maxDurationSeconds,
    deadlineAt: deadlineFor(createdAt, agent.settings.maxDurationSeconds),
    openShard: shardOf(callId),
    transcriptExpected: true,
    statsTimezone: (access.workspace as { timezone?: string }).timezone ?? 'UTC',
  };
  const result = await callingService.transaction
    .write((entities) => callOpeningWrites(entities, call, 'api'))
    .go();
  if (result.canceled) {
    logger.info('web call refused: the workspace is at its concurrency limit', { workspaceId });
    throw tooManyRequests(TOO_MANY_CONCURRENT_CALLS, CONCURRENCY_RETRY_AFTER_SECONDS);
  }
  logger.info('web call created', { workspaceId, callId, transport: transport.transport });
  return {
    call_id: callId,
    expires_at: webCallConnectBy(createdAt).toISOString(),
    ...transport,
  };
}
