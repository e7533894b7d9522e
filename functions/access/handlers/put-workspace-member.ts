import { implement } from '../../platform/http/index.js';
import { accessRoutes } from '../routes.js';
import { requireUser, requireWorkspace } from '../workspace-access.js';
import { putWorkspaceMember } from '../workspaces.js';
import { workspaceMemberView } from '../views.js';

/** `PUT /api/v1/workspaces/{workspace_id}/members/{user_id}`: workspace admins set an org member's role. */
export const handler = implement(accessRoutes.putWorkspaceMember, async (req) => {
  const access = await requireWorkspace(
    requireUser(req.principal),
    req.params.workspace_id,
    'workspace:manage_members',
  );
  const member = await putWorkspaceMember(access, req.params.user_id, req.body.role);
  return { status: 200, body: workspaceMemberView(member) };
});
