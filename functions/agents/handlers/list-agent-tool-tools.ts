import { requireWorkspace } from '../../access/workspace-access.js';
import { implement } from '../../platform/http/index.js';
import { agentRoutes } from '../routes.js';
import { getAgent } from '../service.js';
import { listToolTools, routeDeadline } from '../tool-runs.js';

/** POST /api/v1/workspaces/{workspace_id}/agents/{agent_id}/tools/{name}/list — member (API key: agents:write). */
export const handler = implement(agentRoutes.listAgentToolTools, async (req) => {
  const access = await requireWorkspace(req.principal, req.params.workspace_id, 'agents:write');
  const agent = await getAgent(access.workspace.workspaceId, req.params.agent_id);
  const deadline = routeDeadline(req.remainingMs());
  return { status: 200, body: await listToolTools(agent, req.params.name, undefined, deadline) };
});
