import { requireWorkspace } from '../../access/workspace-access.js';
import { implement } from '../../platform/http/index.js';
import { agentRoutes } from '../routes.js';
import { getAgent } from '../service.js';
import { routeDeadline, testTool } from '../tool-runs.js';

/** POST /api/v1/workspaces/{workspace_id}/agents/{agent_id}/tools/{name}/test — member (API key: agents:write). */
export const handler = implement(agentRoutes.testAgentTool, async (req) => {
  const access = await requireWorkspace(req.principal, req.params.workspace_id, 'agents:write');
  const agent = await getAgent(access.workspace.workspaceId, req.params.agent_id);
  const deadline = routeDeadline(req.remainingMs());
  const body = await testTool(agent, req.params.name, req.body.arguments ?? {}, undefined, deadline);
  return { status: 200, body };
});
