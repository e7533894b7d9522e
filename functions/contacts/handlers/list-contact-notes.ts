import { requireWorkspace } from '../../access/workspace-access.js';
import { implement } from '../../platform/http/index.js';
import { listNotes } from '../notes.js';
import { contactRoutes } from '../routes.js';
import { noteView } from '../views.js';

/** GET /api/v1/workspaces/{workspace_id}/contacts/{contact_id}/notes — any workspace role (API key: contacts:read). */
export const handler = implement(contactRoutes.listContactNotes, async (req) => {
  const access = await requireWorkspace(req.principal, req.params.workspace_id, 'workspace:read');
  const page = await listNotes(access.workspace.workspaceId, req.params.contact_id, req.query);
  return { status: 200, body: { items: page.items.map(noteView), next_cursor: page.nextCursor } };
});
