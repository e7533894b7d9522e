import { requireWorkspace } from '../../access/workspace-access.js';
import { implement } from '../../platform/http/index.js';
import { contactRoutes } from '../routes.js';
import { deleteContact } from '../changes.js';

/** DELETE /api/v1/workspaces/{workspace_id}/contacts/{contact_id} — workspace member (API key: contacts:write). */
export const handler = implement(contactRoutes.deleteContact, async (req) => {
  const access = await requireWorkspace(req.principal, req.params.workspace_id, 'contacts:write');
  await deleteContact(access.workspace.workspaceId, req.params.contact_id);
  return { status: 204 };
});
