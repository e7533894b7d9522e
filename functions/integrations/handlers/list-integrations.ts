import { requireWorkspace } from '../../access/workspace-access.js';
import { implement } from '../../platform/http/index.js';
import { integrationRoutes } from '../routes.js';
import { listIntegrations } from '../service.js';
import { integrationView } from '../views.js';

/** GET /api/v1/workspaces/{workspace_id}/integrations — any workspace role. */
export const handler = implement(integrationRoutes.listIntegrations, async (req) => {
  const access = await requireWorkspace(req.principal, req.params.workspace_id, 'workspace:read');
  const page = await listIntegrations(access.workspace.workspaceId, req.query);
  return { status: 200, body: { items: page.items.map(integrationView), next_cursor: page.nextCursor } };
});
