import { requireWorkspace } from '../../access/workspace-access.js';
import { implement } from '../../platform/http/index.js';
import { workflowRoutes } from '../routes.js';
import { deleteWorkflow, requireWorkflowsOnPlan } from '../service.js';

/** DELETE /api/v1/workspaces/{workspace_id}/workflows/{workflow_id} — workspace member; plan feature workflows. */
export const handler = implement(workflowRoutes.deleteWorkflow, async (req) => {
  const access = await requireWorkspace(req.principal, req.params.workspace_id, 'workflows:write');
  await requireWorkflowsOnPlan(access.organisationId);
  await deleteWorkflow(access.workspace.workspaceId, req.params.workflow_id);
  return { status: 204 };
});
