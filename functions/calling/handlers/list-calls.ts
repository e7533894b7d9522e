import { requireWorkspace } from '../../access/workspace-access.js';
import { implement } from '../../platform/http/index.js';
import { callRoutes } from '../routes.js';
import { listCalls, toCallSummary } from '../call-log.js';

/** GET /api/v1/workspaces/{workspace_id}/calls — the call log, newest first (API key: calls:read). */
export const handler = implement(callRoutes.listCalls, async (req) => {
  const access = await requireWorkspace(req.principal, req.params.workspace_id, 'workspace:read');
  const page = await listCalls(access.workspace.workspaceId, req.query);
  return { status: 200, body: { items: page.items.map(toCallSummary), next_cursor: page.nextCursor } };
});
