import { requireWorkspace } from '../../access/workspace-access.js';
import { implement } from '../../platform/http/index.js';
import { contactRoutes } from '../routes.js';
import { listContactsShown } from '../list.js';
import { contactView } from '../views.js';

/** GET /api/v1/workspaces/{workspace_id}/contacts — any workspace role (API key: contacts:read). */
export const handler = implement(contactRoutes.listContacts, async (req) => {
  const access = await requireWorkspace(req.principal, req.params.workspace_id, 'workspace:read');
  const page = await listContactsShown(access.workspace.workspaceId, req.query);
  return { status: 200, body: { items: page.items.map(contactView), next_cursor: page.nextCursor } };
});
