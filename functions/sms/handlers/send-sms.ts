import { workspaceCountry } from '../../access/entities.js';
import { requireWorkspace } from '../../access/workspace-access.js';
import { actorId } from '../../platform/auth/principal.js';
import { implement } from '../../platform/http/index.js';
import { sendSms } from '../send-sms.js';
import { smsRoutes } from '../routes.js';
import { messageView } from '../views.js';

/** POST /api/v1/workspaces/{workspace_id}/sms — workspace member (API key: sms:write). */
export const handler = implement(smsRoutes.sendSms, async (req) => {
  const access = await requireWorkspace(req.principal, req.params.workspace_id, 'sms:write');
  const message = await sendSms({
    workspaceId: access.workspace.workspaceId,
    organisationId: access.organisationId,
    to: req.body.to_phone,
    body: req.body.body,
    from: req.body.from_phone,
    kind: 'direct',
    createdBy: actorId(req.principal),
    country: workspaceCountry(access.workspace),
  });
  return { status: 201, body: messageView(message) };
});
