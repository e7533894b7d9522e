import { requireWorkspace } from '../../access/workspace-access.js';
import { implement } from '../../platform/http/index.js';
import { integrationRoutes } from '../routes.js';
import { deleteIntegration, requireIntegrationsPlan } from '../service.js';

/** DELETE /api/v1/workspaces/{workspace_id}/integrations/{integration_id} — workspace member, plan with integrations. */
export const handler = implement(integrationRoutes.deleteIntegration, async (req) => {
  const access = await requireWorkspace(req.principal, req.params.workspace_id, 'integrations:write');
  await requireIntegrationsPlan(access.organisationId);
  await deleteIntegration(access.workspace.workspaceId, req.params.integration_id);
  return { status: 204 };
});
