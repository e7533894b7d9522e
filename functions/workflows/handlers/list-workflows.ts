import { requireWorkspace } from '../../access/workspace-access.js';
import { implement } from '../../platform/http/index.js';
import { workflowRoutes } from '../routes.js';
import { listWorkflows, workflowView } from '../service.js';

/** GET /api/v1/workspaces/{workspace_id}/workflows — any workspace role. */
export const handler = implement(workflowRoutes.listWorkflows, async (req) => {
  const access = await requireWorkspace(req.principal, req.params.workspace_id, 'workspace:read');
  const page = await listWorkflows(access.workspace.workspaceId, req.query);
  return { status: 200, body: { items: page.items.map(workflowView), next_cursor: page.nextCursor } };
});
