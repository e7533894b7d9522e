import { workspaceCountry } from '../../access/entities.js';
import { requireWorkspace } from '../../access/workspace-access.js';
import { implement } from '../../platform/http/index.js';
import { contactRoutes } from '../routes.js';
import { createContact } from '../creation.js';
import { contactView } from '../views.js';

/** POST /api/v1/workspaces/{workspace_id}/contacts — workspace member (API key: contacts:write). */
export const handler = implement(contactRoutes.createContact, async (req) => {
  const access = await requireWorkspace(req.principal, req.params.workspace_id, 'contacts:write');
  const contact = await createContact(access.workspace.workspaceId, req.body, {
    country: workspaceCountry(access.workspace),
  });
  return { status: 201, body: contactView(contact) };
});
