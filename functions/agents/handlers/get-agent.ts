import { requireWorkspace } from '../../access/workspace-access.js';
import { agentsSuspended } from '../../billing/suspension.js';
import { implement } from '../../platform/http/index.js';
import { agentRoutes } from '../routes.js';
import { getAgent, toAgentResponse } from '../service.js';

/** GET /api/v1/workspaces/{workspace_id}/agents/{agent_id} — any workspace role (API key: agents:read). */
export const handler = implement(agentRoutes.getAgent, async (req) => {
  const access = await requireWorkspace(req.principal, req.params.workspace_id, 'workspace:read');
  const [agent, suspended] = await Promise.all([
    getAgent(access.workspace.workspaceId, req.params.agent_id),
    agentsSuspended(access.organisationId),
  ]);
  return { status: 200, body: toAgentResponse(agent, suspended) };
});
