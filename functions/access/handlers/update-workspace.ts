import { implement } from '../../platform/http/index.js';
import { accessRoutes } from '../routes.js';
import { requireUser, requireWorkspace } from '../workspace-access.js';
import { updateWorkspace } from '../workspaces.js';
import { workspaceView } from '../views.js';

/** `PATCH /api/v1/workspaces/{workspace_id}`: workspace admins change its settings. */
export const handler = implement(accessRoutes.updateWorkspace, async (req) => {
  const access = await requireWorkspace(
    requireUser(req.principal),
    req.params.workspace_id,
    'workspace:update_settings',
  );
  const workspace = await updateWorkspace(access, req.body);
  return { status: 200, body: workspaceView(workspace, access.workspaceRole) };
});
