import { workspaceCountry } from '../../access/entities.js';
import { requireWorkspace } from '../../access/workspace-access.js';
import { implement } from '../../platform/http/index.js';
import { contactRoutes } from '../routes.js';
import { updateContact } from '../changes.js';
import { contactView } from '../views.js';

/** PATCH /api/v1/workspaces/{workspace_id}/contacts/{contact_id} — workspace member (API key: contacts:write). */
export const handler = implement(contactRoutes.updateContact, async (req) => {
  const access = await requireWorkspace(req.principal, req.params.workspace_id, 'contacts:write');
  const contact = await updateContact(access.workspace.workspaceId, req.params.contact_id, req.body ?? {}, {
    country: workspaceCountry(access.workspace),
  });
  return { status: 200, body: contactView(contact) };
});
