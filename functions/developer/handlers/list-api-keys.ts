import { implement } from '../../platform/http/index.js';
import { developerRoutes } from '../routes.js';
import { requireUser, requireWorkspace } from '../../access/workspace-access.js';
import { apiKeyView, listApiKeys } from '../api-keys.js';

/** `GET /api/v1/workspaces/{workspace_id}/api-keys`: the workspace's keys, never their secrets (members; viewers are refused). */
export const handler = implement(developerRoutes.listApiKeys, async (req) => {
  const access = await requireWorkspace(requireUser(req.principal), req.params.workspace_id, 'api_keys:read');
  const page = await listApiKeys(access, req.query);
  return { status: 200, body: { items: page.items.map(apiKeyView), next_cursor: page.nextCursor } };
});
