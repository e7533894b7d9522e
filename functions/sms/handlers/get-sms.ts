import { requireWorkspace } from '../../access/workspace-access.js';
import { notFound } from '../../platform/errors.js';
import { implement } from '../../platform/http/index.js';
import { getMessage, MESSAGE_NOT_FOUND } from '../messages.js';
import { smsRoutes } from '../routes.js';
import { messageView } from '../views.js';

/** GET /api/v1/workspaces/{workspace_id}/sms/{message_id} — any workspace role (API key: sms:read). */
export const handler = implement(smsRoutes.getSms, async (req) => {
  const access = await requireWorkspace(req.principal, req.params.workspace_id, 'workspace:read');
  const message = await getMessage(access.workspace.workspaceId, req.params.message_id);
  if (!message) throw notFound(MESSAGE_NOT_FOUND);
  return { status: 200, body: messageView(message) };
});
