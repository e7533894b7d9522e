import { implement } from '../../platform/http/index.js';
import { accessRoutes } from '../routes.js';
import { requireUser, requireWorkspace } from '../workspace-access.js';
import { listWorkspaceMembers } from '../workspaces.js';
import { workspaceMemberView } from '../views.js';

/** `GET /api/v1/workspaces/{workspace_id}/members`: effective roles (organisation owner/admin show as admin). */
export const handler = implement(accessRoutes.listWorkspaceMembers, async (req) => {
  const access = await requireWorkspace(
    requireUser(req.principal),
    req.params.workspace_id,
    'workspace:read',
  );
  const page = await listWorkspaceMembers(access, req.query);
  return { status: 200, body: { items: page.items.map(workspaceMemberView), next_cursor: page.nextCursor } };
});
