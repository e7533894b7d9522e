import { implement } from '../../platform/http/index.js';
import { accessRoutes } from '../routes.js';
import { requireOrganisation } from '../workspace-access.js';
import { createWorkspace } from '../workspaces.js';
import { workspaceView } from '../views.js';

/** `POST /api/v1/organisations/{organisation_id}/workspaces`: owner or admin. */
export const handler = implement(accessRoutes.createWorkspace, async (req) => {
  const access = await requireOrganisation(
    req.principal,
    req.params.organisation_id,
    'organisation:create_workspace',
  );
  const { workspace, role } = await createWorkspace(access, req.body);
  return { status: 201, body: workspaceView(workspace, role) };
});
