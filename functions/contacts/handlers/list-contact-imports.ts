import { requireWorkspace } from '../../access/workspace-access.js';
import { implement } from '../../platform/http/index.js';
import { importView, listImports } from '../imports.js';
import { contactRoutes } from '../routes.js';

/** GET /api/v1/workspaces/{workspace_id}/contacts/imports — any workspace role (API key: contacts:read). */
export const handler = implement(contactRoutes.listContactImports, async (req) => {
  const access = await requireWorkspace(req.principal, req.params.workspace_id, 'workspace:read');
  const page = await listImports(access.workspace.workspaceId, req.query);
  return {
    status: 200,
    body: { items: page.items.map((job) => importView(job)), next_cursor: page.nextCursor },
  };
});
