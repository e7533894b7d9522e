import { implement } from '../../platform/http/index.js';
import { accessRoutes } from '../routes.js';
import { requireUser, requireWorkspace } from '../workspace-access.js';
import { removeWorkspaceMember } from '../workspaces.js';

/** `DELETE /api/v1/workspaces/{workspace_id}/members/{user_id}`: workspace admins remove a workspace row. */
export const handler = implement(accessRoutes.removeWorkspaceMember, async (req) => {
  const access = await requireWorkspace(
    requireUser(req.principal),
    req.params.workspace_id,
    'workspace:manage_members',
  );
  await removeWorkspaceMember(access, req.params.user_id);
  return { status: 204 };
});
