import { requireWorkspace } from '../../access/workspace-access.js';
import { agentsSuspended } from '../../billing/suspension.js';
import { implement } from '../../platform/http/index.js';
import { agentRoutes } from '../routes.js';
import { getAgent, toAgentResponse } from '../service.js';
import { agentAsOf, getAgentVersion, toVersionSummary, versionNumber } from '../versions.js';

/** GET …/agents/{agent_id}/versions/{version} — any workspace role (API key: agents:read). */
export const handler = implement(agentRoutes.getAgentVersion, async (req) => {
  const access = await requireWorkspace(req.principal, req.params.workspace_id, 'workspace:read');
  const [agent, suspended] = await Promise.all([
    getAgent(access.workspace.workspaceId, req.params.agent_id),
    agentsSuspended(access.organisationId),
  ]);
  const version = await getAgentVersion(agent.workspaceId, agent.agentId, versionNumber(req.params.version));
  return {
    status: 200,
    body: { ...toVersionSummary(version), agent: toAgentResponse(agentAsOf(agent, version), suspended) },
  };
});
