import { requireWorkspace } from '../../access/workspace-access.js';
import { implement } from '../../platform/http/index.js';
import { agentRoutes } from '../routes.js';
import { deleteAgent } from '../../numbers/agent-deletion.js';

/** DELETE /api/v1/workspaces/{workspace_id}/agents/{agent_id} — workspace member (API key: agents:write). */
export const handler = implement(agentRoutes.deleteAgent, async (req) => {
  const access = await requireWorkspace(req.principal, req.params.workspace_id, 'agents:write');
  await deleteAgent(access.workspace.workspaceId, req.params.agent_id);
  return { status: 204 };
});
