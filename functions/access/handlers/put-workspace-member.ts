import { httpHandler } from '../../platform/http/index.js';
import { PutWorkspaceMemberBody } from '../schemas.js';
import { requireUser, requireWorkspace } from '../workspace-access.js';
import { putWorkspaceMember } from '../workspaces.js';
import { workspaceMemberView } from '../views.js';

/** `PUT /api/v1/workspaces/{workspace_id}/members/{user_id}`: workspace admins set an org member's role. */
export const handler = httpHandler({ auth: 'user', body: PutWorkspaceMemberBody }, async (req) => {
  const access = await requireWorkspace(
    requireUser(req.principal),
    req.params.workspace_id,
    'workspace:manage_members',
  );
  const member = await putWorkspaceMember(access, req.params.user_id, req.body.role);
  return { status: 200, body: workspaceMemberView(member) };
});
