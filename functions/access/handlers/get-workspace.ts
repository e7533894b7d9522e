import { implement } from '../../platform/http/index.js';
import { accessRoutes } from '../routes.js';
import { requireWorkspace } from '../workspace-access.js';
import { workspaceView } from '../views.js';

/** `GET /api/v1/workspaces/{workspace_id}`: any workspace member, or an API key of it with `workspace:read`. */
export const handler = implement(accessRoutes.getWorkspace, async (req) => {
  const access = await requireWorkspace(req.principal, req.params.workspace_id, 'workspace:read');
  return {
    status: 200,
    body: workspaceView(access.workspace, req.principal.kind === 'user' ? access.workspaceRole : null),
  };
});
