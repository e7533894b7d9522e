import { requireWorkspace } from '../../access/workspace-access.js';
import { implement } from '../../platform/http/index.js';
import { agentRoutes } from '../routes.js';
import { getAgent, toAgentResponse } from '../service.js';

/** GET /api/v1/workspaces/{workspace_id}/agents/{agent_id} — any workspace role (API key: agents:read). */
export const handler = implement(agentRoutes.getAgent, async (req) => {
  const access = await requireWorkspace(req.principal, req.params.workspace_id, 'workspace:read');
  const agent = await getAgent(access.workspace.workspaceId, req.params.agent_id);
  return { status: 200, body: toAgentResponse(agent) };
});
