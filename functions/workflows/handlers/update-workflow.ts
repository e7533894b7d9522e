import { requireWorkspace } from '../../access/workspace-access.js';
import { implement } from '../../platform/http/index.js';
import { workflowRoutes } from '../routes.js';
import { requireWorkflowsOnPlan, updateWorkflow, workflowView } from '../service.js';

/** PATCH /api/v1/workspaces/{workspace_id}/workflows/{workflow_id} — workspace member; plan feature workflows. */
export const handler = implement(workflowRoutes.updateWorkflow, async (req) => {
  const access = await requireWorkspace(req.principal, req.params.workspace_id, 'workflows:write');
  await requireWorkflowsOnPlan(access.organisationId);
  const workflow = await updateWorkflow(access.workspace.workspaceId, req.params.workflow_id, req.body);
  return { status: 200, body: workflowView(workflow) };
});
