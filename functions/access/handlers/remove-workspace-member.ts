import { httpHandler } from '../../platform/http/index.js';
import { requireUser, requireWorkspace } from '../workspace-access.js';
import { removeWorkspaceMember } from '../workspaces.js';

/** `DELETE /api/v1/workspaces/{workspace_id}/members/{user_id}`: workspace admins remove a workspace row. */
export const handler = httpHandler({ auth: 'user' }, async (req) => {
  const access = await requireWorkspace(
    requireUser(req.principal),
    req.params.workspace_id,
    'workspace:manage_members',
  );
  await removeWorkspaceMember(access, req.params.user_id);
  return { status: 204 };
});
