import { implement } from '../../platform/http/index.js';
import { accessRoutes } from '../routes.js';
import { requireOrganisation } from '../workspace-access.js';
import { listWorkspaces } from '../workspaces.js';
import { workspaceView } from '../views.js';

/** `GET /api/v1/organisations/{organisation_id}/workspaces`: those the caller has a role in. */
export const handler = implement(accessRoutes.listWorkspaces, async (req) => {
  const access = await requireOrganisation(req.principal, req.params.organisation_id, 'organisation:read');
  const page = await listWorkspaces(access, req.query);
  return {
    status: 200,
    body: { items: page.items.map((r) => workspaceView(r.workspace, r.role)), next_cursor: page.nextCursor },
  };
});
