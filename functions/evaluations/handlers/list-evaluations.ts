import { requireWorkspace } from '../../access/workspace-access.js';
import { implement } from '../../platform/http/index.js';
import { evaluationRoutes } from '../routes.js';
import { listEvaluations } from '../service.js';

/** GET …/agents/{agent_id}/evaluations — viewer (API key: agents:read). */
export const handler = implement(evaluationRoutes.listEvaluations, async (req) => {
  const access = await requireWorkspace(req.principal, req.params.workspace_id, 'workspace:read');
  const page = await listEvaluations(access.workspace.workspaceId, req.params.agent_id, req.query);
  return { status: 200, body: { items: page.items, next_cursor: page.nextCursor } };
});
