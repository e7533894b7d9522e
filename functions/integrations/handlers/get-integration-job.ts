import { requireWorkspace } from '../../access/workspace-access.js';
import { implement } from '../../platform/http/index.js';
import { integrationRoutes } from '../routes.js';
import { requireIntegration, requireJob } from '../service.js';
import { syncJobView } from '../views.js';

/** GET /api/v1/workspaces/{workspace_id}/integrations/{integration_id}/jobs/{job_id} — any workspace role. */
export const handler = implement(integrationRoutes.getIntegrationJob, async (req) => {
  const access = await requireWorkspace(req.principal, req.params.workspace_id, 'workspace:read');
  const integration = await requireIntegration(access.workspace.workspaceId, req.params.integration_id);
  const job = await requireJob(integration.workspaceId, integration.integrationId, req.params.job_id);
  return { status: 200, body: syncJobView(job) };
});
