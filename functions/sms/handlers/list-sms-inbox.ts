import { requireWorkspace } from '../../access/workspace-access.js';
import { implement } from '../../platform/http/index.js';
import { listThreads } from '../inbox.js';
import { smsRoutes } from '../routes.js';
import { threadView } from '../views.js';

/** GET /api/v1/workspaces/{workspace_id}/sms-inbox — any workspace role (API key: sms:read). */
export const handler = implement(smsRoutes.listSmsInbox, async (req) => {
  const access = await requireWorkspace(req.principal, req.params.workspace_id, 'workspace:read');
  const page = await listThreads(access.workspace.workspaceId, req.query);
  return { status: 200, body: { items: page.items.map(threadView), next_cursor: page.nextCursor } };
});
