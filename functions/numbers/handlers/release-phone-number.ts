import { requireWorkspace } from '../../access/workspace-access.js';
import { implement } from '../../platform/http/index.js';
import { numberRoutes } from '../routes.js';
import { releaseNumber } from '../service.js';

/** DELETE /api/v1/workspaces/{workspace_id}/phone-numbers/{number_id} — organisation owner or admin. */
export const handler = implement(numberRoutes.releasePhoneNumber, async (req) => {
  const access = await requireWorkspace(req.principal, req.params.workspace_id, 'numbers:release');
  await releaseNumber(access.workspace.workspaceId, req.params.number_id);
  return { status: 204 };
});
