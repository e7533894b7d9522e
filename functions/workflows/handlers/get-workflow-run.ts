import { requireWorkspace } from '../../access/workspace-access.js';
import { implement } from '../../platform/http/index.js';
import { workflowRoutes } from '../routes.js';
import { requireRun, runView } from '../runs.js';

/** GET /api/v1/workspaces/{workspace_id}/workflows/{workflow_id}/runs/{run_id} — any workspace role. */
export const handler = implement(workflowRoutes.getWorkflowRun, async (req) => {
  const access = await requireWorkspace(req.principal, req.params.workspace_id, 'workspace:read');
  const run = await requireRun(access.workspace.workspaceId, req.params.workflow_id, req.params.run_id);
  return { status: 200, body: runView(run) };
});
