import { requireWorkspace } from '../../access/workspace-access.js';
import { implement } from '../../platform/http/index.js';
import { updateNote } from '../notes.js';
import { contactRoutes } from '../routes.js';
import { noteView } from '../views.js';

/** PATCH /api/v1/workspaces/{workspace_id}/contacts/{contact_id}/notes/{note_id} — workspace member (API key: contacts:write). */
export const handler = implement(contactRoutes.updateContactNote, async (req) => {
  const access = await requireWorkspace(req.principal, req.params.workspace_id, 'contacts:write');
  const note = await updateNote(
    access.workspace.workspaceId,
    req.params.contact_id,
    req.params.note_id,
    req.body ?? {},
  );
  return { status: 200, body: noteView(note) };
});
