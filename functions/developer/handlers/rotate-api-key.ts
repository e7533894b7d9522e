import { implement } from '../../platform/http/index.js';
import { developerRoutes } from '../routes.js';
import { requireUser, requireWorkspace } from '../../access/workspace-access.js';
import { apiKeyView, requireApiKeysOnPlan, rotateApiKey } from '../api-keys.js';

/** `POST /api/v1/workspaces/{workspace_id}/api-keys/{key_id}/rotate`: a new secret, shown once; the old one stops working. */
export const handler = implement(developerRoutes.rotateApiKey, async (req) => {
  const access = await requireWorkspace(
    requireUser(req.principal),
    req.params.workspace_id,
    'api_keys:manage',
  );
  await requireApiKeysOnPlan(access.organisationId);
  const { apiKey, key } = await rotateApiKey(access, req.params.key_id);
  return { status: 201, body: { ...apiKeyView(apiKey), key } };
});
