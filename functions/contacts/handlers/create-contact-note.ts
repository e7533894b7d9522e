import { requireWorkspace } from '../../access/workspace-access.js';
import { actorId } from '../../platform/auth/principal.js';
import { implement } from '../../platform/http/index.js';
import { addNote } from '../notes.js';
import { contactRoutes } from '../routes.js';
import { noteView } from '../views.js';

/** POST /api/v1/workspaces/{workspace_id}/contacts/{contact_id}/notes — workspace member (API key: contacts:write). */
export const handler = implement(contactRoutes.createContactNote, async (req) => {
  const access = await requireWorkspace(req.principal, req.params.workspace_id, 'contacts:write');
  const note = await addNote(
    access.workspace.workspaceId,
    req.params.contact_id,
    req.body,
    actorId(req.principal),
  );
  return { status: 201, body: noteView(note) };
});
