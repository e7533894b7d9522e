import { requireWorkspace } from '../../access/workspace-access.js';
import { agentsSuspended } from '../../billing/suspension.js';
import { implement } from '../../platform/http/index.js';
import { agentRoutes } from '../routes.js';
import { listAgents, toAgentResponse } from '../service.js';

/** GET /api/v1/workspaces/{workspace_id}/agents — any workspace role (API key: agents:read). */
export const handler = implement(agentRoutes.listAgents, async (req) => {
  const access = await requireWorkspace(req.principal, req.params.workspace_id, 'workspace:read');
  const [page, suspended] = await Promise.all([
    listAgents(access.workspace.workspaceId, req.query),
    agentsSuspended(access.organisationId),
  ]);
  return {
    status: 200,
    body: {
      items: page.items.map((agent) => toAgentResponse(agent, suspended)),
      next_cursor: page.nextCursor,
    },
  };
});
