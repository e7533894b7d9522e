import { requireWorkspace } from '../../access/workspace-access.js';
import { agentsSuspended } from '../../billing/suspension.js';
import { actorId } from '../../platform/auth/principal.js';
import { implement } from '../../platform/http/index.js';
import { agentRoutes } from '../routes.js';
import { getAgent, restoreAgentVersion, toAgentResponse } from '../service.js';
import { versionNumber } from '../versions.js';

/** POST …/agents/{agent_id}/versions/{version}/restore — workspace member (API key: agents:write). */
export const handler = implement(agentRoutes.restoreAgentVersion, async (req) => {
  const access = await requireWorkspace(req.principal, req.params.workspace_id, 'agents:write');
  // 404 Agent not found before 404 Agent version not found.
  const agent = await getAgent(access.workspace.workspaceId, req.params.agent_id);
  const [restored, suspended] = await Promise.all([
    restoreAgentVersion(agent.workspaceId, agent.agentId, versionNumber(req.params.version), {
      actor: actorId(req.principal),
    }),
    agentsSuspended(access.organisationId),
  ]);
  return { status: 200, body: toAgentResponse(restored, suspended) };
});
