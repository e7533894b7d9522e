import { requireWorkspace } from '../../access/workspace-access.js';
import { implement } from '../../platform/http/index.js';
import { evaluationRoutes } from '../routes.js';
import { cancelEvaluation } from '../service.js';

/** POST …/evaluations/{evaluation_id}/cancel — member (API key: agents:write). No refund. */
export const handler = implement(evaluationRoutes.cancelEvaluation, async (req) => {
  const access = await requireWorkspace(req.principal, req.params.workspace_id, 'agents:write');
  const view = await cancelEvaluation(
    access.workspace.workspaceId,
    req.params.agent_id,
    req.params.evaluation_id,
  );
  return { status: 200, body: view };
});
