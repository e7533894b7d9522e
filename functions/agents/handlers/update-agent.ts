import { requireWorkspace } from '../../access/workspace-access.js';
import { httpHandler } from '../../platform/http/index.js';
import { UpdateAgentBody } from '../schemas.js';
import { toAgentResponse, updateAgent } from '../service.js';

/** PATCH /api/v1/workspaces/{workspace_id}/agents/{agent_id} — workspace member (API key: agents:write). */
export const handler = httpHandler(
  { auth: 'user_or_api_key', scope: 'agents:write', body: UpdateAgentBody },
  async (req) => {
    const access = await requireWorkspace(req.principal, req.params.workspace_id, 'agents:write');
    const agent = await updateAgent(access.workspace.workspaceId, req.params.agent_id, req.body ?? {});
    return { status: 200, body: toAgentResponse(agent) };
  },
);
