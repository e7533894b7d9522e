import { httpHandler } from '../../platform/http/index.js';
import { ListQuery } from '../schemas.js';
import { requireUser, requireWorkspace } from '../workspace-access.js';
import { listWorkspaceMembers } from '../workspaces.js';
import { workspaceMemberView } from '../views.js';

/** `GET /api/v1/workspaces/{workspace_id}/members`: effective roles (organisation owner/admin show as admin). */
export const handler = httpHandler({ auth: 'user', query: ListQuery }, async (req) => {
  const access = await requireWorkspace(
    requireUser(req.principal),
    req.params.workspace_id,
    'workspace:read',
  );
  const page = await listWorkspaceMembers(access, req.query);
  return { status: 200, body: { items: page.items.map(workspaceMemberView), next_cursor: page.nextCursor } };
});
