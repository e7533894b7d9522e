import { requireWorkspace } from '../../access/workspace-access.js';
import { implement } from '../../platform/http/index.js';
import { integrationRoutes } from '../routes.js';
import { connectIntegration, requireIntegrationsPlan } from '../service.js';
import { syncJobView } from '../views.js';

/** POST /api/v1/workspaces/{workspace_id}/integrations/{integration_id}/connect — workspace member, plan with integrations. */
export const handler = implement(integrationRoutes.connectIntegration, async (req) => {
  const access = await requireWorkspace(req.principal, req.params.workspace_id, 'integrations:write');
  await requireIntegrationsPlan(access.organisationId);
  const job = await connectIntegration(access.workspace.workspaceId, req.params.integration_id);
  return { status: 202, body: syncJobView(job) };
});
