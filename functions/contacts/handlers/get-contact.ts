import { requireWorkspace } from '../../access/workspace-access.js';
import { implement } from '../../platform/http/index.js';
import { contactRoutes } from '../routes.js';
import { requireContact } from '../lookup.js';
import { contactView } from '../views.js';

/** GET /api/v1/workspaces/{workspace_id}/contacts/{contact_id} — any workspace role (API key: contacts:read). */
export const handler = implement(contactRoutes.getContact, async (req) => {
  const access = await requireWorkspace(req.principal, req.params.workspace_id, 'workspace:read');
  const contact = await requireContact(access.workspace.workspaceId, req.params.contact_id, {
    withCalls: true,
  });
  return { status: 200, body: contactView(contact) };
});
