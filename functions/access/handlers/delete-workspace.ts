import { implement } from '../../platform/http/index.js';
import { accessRoutes } from '../routes.js';
import { requireUser, requireWorkspace } from '../workspace-access.js';
import { deleteWorkspace } from '../workspaces.js';

/** `DELETE /api/v1/workspaces/{workspace_id}`: workspace admins; afterwards it and its contents are 404. */
export const handler = implement(accessRoutes.deleteWorkspace, async (req) => {
  const access = await requireWorkspace(
    requireUser(req.principal),
    req.params.workspace_id,
    'workspace:delete',
  );
  await deleteWorkspace(access);
  return { status: 204 };
});
