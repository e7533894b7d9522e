import { requireWorkspace } from '../../access/workspace-access.js';
import { implement } from '../../platform/http/index.js';
import { readThread } from '../inbox.js';
import { smsRoutes } from '../routes.js';
import { messageView } from '../views.js';

/** GET /api/v1/workspaces/{workspace_id}/sms-inbox/{contact_id} — any workspace role (API key: sms:read). */
export const handler = implement(smsRoutes.getSmsThread, async (req) => {
  const access = await requireWorkspace(req.principal, req.params.workspace_id, 'workspace:read');
  const page = await readThread(access.workspace.workspaceId, req.params.contact_id, req.query);
  return { status: 200, body: { items: page.items.map(messageView), next_cursor: page.nextCursor } };
});
