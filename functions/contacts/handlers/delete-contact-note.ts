import { requireWorkspace } from '../../access/workspace-access.js';
import { implement } from '../../platform/http/index.js';
import { deleteNote } from '../notes.js';
import { contactRoutes } from '../routes.js';

/** DELETE /api/v1/workspaces/{workspace_id}/contacts/{contact_id}/notes/{note_id} — workspace member (API key: contacts:write). */
export const handler = implement(contactRoutes.deleteContactNote, async (req) => {
  const access = await requireWorkspace(req.principal, req.params.workspace_id, 'contacts:write');
  await deleteNote(access.workspace.workspaceId, req.params.contact_id, req.params.note_id);
  return { status: 204 };
});
