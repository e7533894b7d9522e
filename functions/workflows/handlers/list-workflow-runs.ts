import { requireWorkspace } from '../../access/workspace-access.js';
import { implement } from '../../platform/http/index.js';
import { workflowRoutes } from '../routes.js';
import { listRuns, runView } from '../runs.js';

/** GET /api/v1/workspaces/{workspace_id}/workflows/{workflow_id}/runs — any workspace role. */
export const handler = implement(workflowRoutes.listWorkflowRuns, async (req) => {
  const access = await requireWorkspace(req.principal, req.params.workspace_id, 'workspace:read');
  const page = await listRuns(access.workspace.workspaceId, req.params.workflow_id, req.query);
  return { status: 200, body: { items: page.items.map(runView), next_cursor: page.nextCursor } };
});
