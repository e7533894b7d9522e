import { requireWorkspace } from '../../access/workspace-access.js';
import { httpHandler } from '../../platform/http/index.js';
import { ListQuery } from '../schemas.js';
import { listAgents, toAgentResponse } from '../service.js';

/** GET /api/v1/workspaces/{workspace_id}/agents — any workspace role (API key: agents:read). */
export const handler = httpHandler(
  { auth: 'user_or_api_key', scope: 'agents:read', query: ListQuery },
  async (req) => {
    const access = await requireWorkspace(req.principal, req.params.workspace_id, 'workspace:read');
    const page = await listAgents(access.workspace.workspaceId, req.query);
    return { status: 200, body: { items: page.items.map(toAgentResponse), next_cursor: page.nextCursor } };
  },
);
