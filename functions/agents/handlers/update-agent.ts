import { requireWorkspace } from '../../access/workspace-access.js';
import { agentsSuspended } from '../../billing/suspension.js';
import { requireKnowledgeBases } from '../../knowledge/agent-bases.js';
import { actorId } from '../../platform/auth/principal.js';
import { implement } from '../../platform/http/index.js';
import { agentRoutes } from '../routes.js';
import { toAgentResponse, updateAgent } from '../service.js';

/** PATCH /api/v1/workspaces/{workspace_id}/agents/{agent_id} — workspace member (API key: agents:write). */
export const handler = implement(agentRoutes.updateAgent, async (req) => {
  const access = await requireWorkspace(req.principal, req.params.workspace_id, 'agents:write');
  await requireKnowledgeBases(access.workspace.workspaceId, req.body?.knowledge_base_ids);
  const [agent, suspended] = await Promise.all([
    updateAgent(access.workspace.workspaceId, req.params.agent_id, req.body ?? {}, {
      actor: actorId(req.principal),
    }),
    agentsSuspended(access.organisationId),
  ]);
  return { status: 200, body: toAgentResponse(agent, suspended) };
});
