import { requireWorkspace } from '../../access/workspace-access.js';
import { implement } from '../../platform/http/index.js';
import { integrationRoutes } from '../routes.js';
import { disconnectIntegration, requireIntegrationsPlan } from '../service.js';
import { integrationView } from '../views.js';

/** POST /api/v1/workspaces/{workspace_id}/integrations/{integration_id}/disconnect — workspace member, plan with integrations. */
export const handler = implement(integrationRoutes.disconnectIntegration, async (req) => {
  const access = await requireWorkspace(req.principal, req.params.workspace_id, 'integrations:write');
  await requireIntegrationsPlan(access.organisationId);
  const integration = await disconnectIntegration(access.workspace.workspaceId, req.params.integration_id);
  return { status: 200, body: integrationView(integration) };
});
