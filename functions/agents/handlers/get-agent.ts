import { requireWorkspace } from '../../access/workspace-access.js';
import { httpHandler } from '../../platform/http/index.js';
import { getAgent, toAgentResponse } from '../service.js';

/** GET /api/v1/workspaces/{workspace_id}/agents/{agent_id} — any workspace role (API key: agents:read). */
export const handler = httpHandler({ auth: 'user_or_api_key', scope: 'agents:read' }, async (req) => {
  const access = await requireWorkspace(req.principal, req.params.workspace_id, 'workspace:read');
  const agent = await getAgent(access.workspace.workspaceId, req.params.agent_id);
  return { status: 200, body: toAgentResponse(agent) };
});
