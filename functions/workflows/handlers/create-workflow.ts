import { requireWorkspace } from '../../access/workspace-access.js';
import { actorId } from '../../platform/auth/principal.js';
import { implement } from '../../platform/http/index.js';
import { workflowRoutes } from '../routes.js';
import { createWorkflow, requireWorkflowsOnPlan, workflowView } from '../service.js';

/** POST /api/v1/workspaces/{workspace_id}/workflows — workspace member; plan feature workflows (402). */
export const handler = implement(workflowRoutes.createWorkflow, async (req) => {
  const access = await requireWorkspace(req.principal, req.params.workspace_id, 'workflows:write');
  await requireWorkflowsOnPlan(access.organisationId);
  const workflow = await createWorkflow(
    { workspaceId: access.workspace.workspaceId, organisationId: access.organisationId },
    req.body,
    actorId(req.principal),
  );
  return { status: 201, body: workflowView(workflow) };
});
