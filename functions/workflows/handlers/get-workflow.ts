import { requireWorkspace } from '../../access/workspace-access.js';
import { implement } from '../../platform/http/index.js';
import { workflowRoutes } from '../routes.js';
import { requireWorkflow, workflowView } from '../service.js';

/** GET /api/v1/workspaces/{workspace_id}/workflows/{workflow_id} — any workspace role. */
export const handler = implement(workflowRoutes.getWorkflow, async (req) => {
  const access = await requireWorkspace(req.principal, req.params.workspace_id, 'workspace:read');
  const workflow = await requireWorkflow(access.workspace.workspaceId, req.params.workflow_id);
  return { status: 200, body: workflowView(workflow) };
});
