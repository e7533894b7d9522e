import { requireWorkspace } from '../../access/workspace-access.js';
import { implement } from '../../platform/http/index.js';
import { integrationRoutes } from '../routes.js';
import { requireIntegration } from '../service.js';
import { integrationView } from '../views.js';

/** GET /api/v1/workspaces/{workspace_id}/integrations/{integration_id} — any workspace role. */
export const handler = implement(integrationRoutes.getIntegration, async (req) => {
  const access = await requireWorkspace(req.principal, req.params.workspace_id, 'workspace:read');
  const integration = await requireIntegration(access.workspace.workspaceId, req.params.integration_id);
  return { status: 200, body: integrationView(integration) };
});
