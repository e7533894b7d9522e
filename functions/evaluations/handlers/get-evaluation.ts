import { requireWorkspace } from '../../access/workspace-access.js';
import { implement } from '../../platform/http/index.js';
import { evaluationRoutes } from '../routes.js';
import { getEvaluation } from '../service.js';

/** GET …/agents/{agent_id}/evaluations/{evaluation_id} — viewer (API key: agents:read). */
export const handler = implement(evaluationRoutes.getEvaluation, async (req) => {
  const access = await requireWorkspace(req.principal, req.params.workspace_id, 'workspace:read');
  const view = await getEvaluation(
    access.workspace.workspaceId,
    req.params.agent_id,
    req.params.evaluation_id,
  );
  return { status: 200, body: view };
});
