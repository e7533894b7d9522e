import { implement } from '../../platform/http/index.js';
import { developerRoutes } from '../routes.js';
import { requireUser, requireWorkspace } from '../../access/workspace-access.js';
import { revokeApiKey } from '../api-keys.js';

/** `DELETE /api/v1/workspaces/{workspace_id}/api-keys/{key_id}`: the key is 401 from now on. */
export const handler = implement(developerRoutes.revokeApiKey, async (req) => {
  const access = await requireWorkspace(
    requireUser(req.principal),
    req.params.workspace_id,
    'api_keys:manage',
  );
  await revokeApiKey(access, req.params.key_id);
  return { status: 204 };
});
