import { httpHandler } from '../../platform/http/index.js';
import { requireUser, requireWorkspace } from '../workspace-access.js';
import { deleteWorkspace } from '../workspaces.js';

/** `DELETE /api/v1/workspaces/{workspace_id}`: workspace admins; afterwards it and its contents are 404. */
export const handler = httpHandler({ auth: 'user' }, async (req) => {
  const access = await requireWorkspace(
    requireUser(req.principal),
    req.params.workspace_id,
    'workspace:delete',
  );
  await deleteWorkspace(access);
  return { status: 204 };
});
