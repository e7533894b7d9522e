import { requireWorkspace } from '../../access/workspace-access.js';
import { implement } from '../../platform/http/index.js';
import { integrationRoutes } from '../routes.js';
import { requireIntegration, requireIntegrationsPlan, startSync } from '../service.js';
import { syncJobView } from '../views.js';

/** POST /api/v1/workspaces/{workspace_id}/integrations/{integration_id}/sync — workspace member, plan with integrations. */
export const handler = implement(integrationRoutes.syncIntegration, async (req) => {
  const access = await requireWorkspace(req.principal, req.params.workspace_id, 'integrations:write');
  await requireIntegrationsPlan(access.organisationId);
  const integration = await requireIntegration(access.workspace.workspaceId, req.params.integration_id);
  const job = await startSync(integration, 'sync');
  return { status: 202, body: syncJobView(job) };
});
