import { requireWorkspace } from '../../access/workspace-access.js';
import { forbidden } from '../../platform/errors.js';
import { implement } from '../../platform/http/index.js';
import { agentRoutes } from '../routes.js';
import { getAgent } from '../service.js';
import { issueTestChatTicket } from '../test-chat.js';
import { getAgentVersion } from '../versions.js';

/** POST /api/v1/workspaces/{workspace_id}/agents/{agent_id}/test-chat — member (a user: the chat is theirs). */
export const handler = implement(agentRoutes.createTestChatTicket, async (req) => {
  if (req.principal.kind !== 'user') throw forbidden();
  const access = await requireWorkspace(req.principal, req.params.workspace_id, 'calls:write');
  const agent = await getAgent(access.workspace.workspaceId, req.params.agent_id);
  // An earlier version asked for must exist (404 now, not when the chat opens).
  const version = req.body.agent_version ?? undefined;
  if (version !== undefined) await getAgentVersion(agent.workspaceId, agent.agentId, version);
  const { ticket, expiresAt } = await issueTestChatTicket({
    workspaceId: agent.workspaceId,
    organisationId: access.organisationId,
    agentId: agent.agentId,
    userId: req.principal.userId,
    parameters: req.body.parameters ?? {},
    runPostCallActions: req.body.run_post_call_actions ?? false,
    ...(version !== undefined ? { agentVersion: version } : {}),
  });
  return {
    status: 201,
    body: { ticket, relay_url: process.env.VOICE_RELAY_URL ?? '', expires_at: expiresAt.toISOString() },
  };
});
