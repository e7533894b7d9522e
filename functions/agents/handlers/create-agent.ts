import { requireWorkspace } from '../../access/workspace-access.js';
import { agentsSuspended } from '../../billing/suspension.js';
import { actorId } from '../../platform/auth/principal.js';
import { requireKnowledgeBases } from '../../knowledge/agent-bases.js';
import { implement } from '../../platform/http/index.js';
import { agentRoutes } from '../routes.js';
import { createAgent, toAgentResponse } from '../service.js';

/** POST /api/v1/workspaces/{workspace_id}/agents — workspace member (API key: agents:write). */
export const handler = implement(agentRoutes.createAgent, async (req) => {
  const access = await requireWorkspace(req.principal, req.params.workspace_id, 'agents:write');
  await requireKnowledgeBases(access.workspace.workspaceId, req.body.knowledge_base_ids);
  const [agent, suspended] = await Promise.all([
    createAgent(access.workspace.workspaceId, access.organisationId, req.body, {
      createdBy: actorId(req.principal),
      workspaceTimezone: access.workspace.timezone,
    }),
    agentsSuspended(access.organisationId),
  ]);
  return { status: 201, body: toAgentResponse(agent, suspended) };
});
