import { requireWorkspace } from '../../access/workspace-access.js';
import { implement } from '../../platform/http/index.js';
import { agentRoutes } from '../routes.js';
import { getAgent } from '../service.js';
import { listAgentVersions, toVersionSummary } from '../versions.js';

/** GET …/agents/{agent_id}/versions — any workspace role (API key: agents:read). */
export const handler = implement(agentRoutes.listAgentVersions, async (req) => {
  const access = await requireWorkspace(req.principal, req.params.workspace_id, 'workspace:read');
  const agent = await getAgent(access.workspace.workspaceId, req.params.agent_id);
  const page = await listAgentVersions(agent.workspaceId, agent.agentId, req.query);
  return { status: 200, body: { items: page.items.map(toVersionSummary), next_cursor: page.nextCursor } };
});
