import { requireWorkspace } from '../../access/workspace-access.js';
import { implement } from '../../platform/http/index.js';
import { actorId } from '../../platform/auth/principal.js';
import { evaluationRoutes } from '../routes.js';
import { startEvaluation } from '../service.js';

/** POST …/agents/{agent_id}/evaluations — member (API key: agents:write); 20 credits at start. */
export const handler = implement(evaluationRoutes.createEvaluation, async (req) => {
  const access = await requireWorkspace(req.principal, req.params.workspace_id, 'agents:write');
  const view = await startEvaluation({
    workspaceId: access.workspace.workspaceId,
    organisationId: access.workspace.organisationId,
    agentId: req.params.agent_id,
    createdBy: actorId(req.principal),
    body: req.body,
  });
  return { status: 201, body: view };
});
