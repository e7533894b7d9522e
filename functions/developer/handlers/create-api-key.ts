import { implement } from '../../platform/http/index.js';
import { developerRoutes } from '../routes.js';
import { requireUser, requireWorkspace } from '../../access/workspace-access.js';
import { apiKeyView, createApiKey, requireApiKeysOnPlan } from '../api-keys.js';

/** `POST /api/v1/workspaces/{workspace_id}/api-keys`: any workspace member (not viewers), plan permitting. */
export const handler = implement(developerRoutes.createApiKey, async (req) => {
  const user = requireUser(req.principal);
  const access = await requireWorkspace(user, req.params.workspace_id, 'api_keys:manage');
  await requireApiKeysOnPlan(access.organisationId);
  const { apiKey, key } = await createApiKey({
    workspaceId: access.workspace.workspaceId,
    organisationId: access.organisationId,
    name: req.body.name,
    scopes: req.body.scopes,
    createdBy: user.userId,
  });
  return { status: 201, body: { ...apiKeyView(apiKey), key } };
});
