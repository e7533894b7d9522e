import { requireWorkspace } from '../../access/workspace-access.js';
import { implement } from '../../platform/http/index.js';
import { integrationRoutes } from '../routes.js';
import { createIntegration, requireIntegrationsPlan } from '../service.js';
import { integrationView } from '../views.js';

/** POST /api/v1/workspaces/{workspace_id}/integrations — workspace member, plan with integrations. */
export const handler = implement(integrationRoutes.createIntegration, async (req) => {
  const access = await requireWorkspace(req.principal, req.params.workspace_id, 'integrations:write');
  await requireIntegrationsPlan(access.organisationId);
  const integration = await createIntegration(
    { workspaceId: access.workspace.workspaceId, organisationId: access.organisationId },
    req.body,
  );
  return { status: 201, body: integrationView(integration) };
});
