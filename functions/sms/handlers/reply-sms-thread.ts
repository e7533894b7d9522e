import { workspaceCountry } from '../../access/entities.js';
import { requireWorkspace } from '../../access/workspace-access.js';
import { requireContact } from '../../contacts/lookup.js';
import { actorId } from '../../platform/auth/principal.js';
import { implement } from '../../platform/http/index.js';
import { sendSms } from '../send-sms.js';
import { smsRoutes } from '../routes.js';
import { messageView } from '../views.js';

/** POST /api/v1/workspaces/{workspace_id}/sms-inbox/{contact_id} — workspace member (API key: sms:write). */
export const handler = implement(smsRoutes.replySmsThread, async (req) => {
  const access = await requireWorkspace(req.principal, req.params.workspace_id, 'sms:write');
  const contact = await requireContact(access.workspace.workspaceId, req.params.contact_id);
  const message = await sendSms({
    workspaceId: access.workspace.workspaceId,
    organisationId: access.organisationId,
    contactId: contact.contactId,
    body: req.body.body,
    kind: 'reply',
    createdBy: actorId(req.principal),
    country: workspaceCountry(access.workspace),
  });
  return { status: 201, body: messageView(message) };
});
