import { requireWorkspace } from '../../access/workspace-access.js';
import { implement } from '../../platform/http/index.js';
import { integrationRoutes } from '../routes.js';
import { listJobs, requireIntegration } from '../service.js';
import { syncJobView } from '../views.js';

/** GET /api/v1/workspaces/{workspace_id}/integrations/{integration_id}/jobs — any workspace role. */
export const handler = implement(integrationRoutes.listIntegrationJobs, async (req) => {
  const access = await requireWorkspace(req.principal, req.params.workspace_id, 'workspace:read');
  const integration = await requireIntegration(access.workspace.workspaceId, req.params.integration_id);
  const page = await listJobs(integration.workspaceId, integration.integrationId, req.query);
  return { status: 200, body: { items: page.items.map(syncJobView), next_cursor: page.nextCursor } };
});
