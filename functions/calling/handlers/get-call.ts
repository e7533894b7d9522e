import { requireWorkspace } from '../../access/workspace-access.js';
import { implement } from '../../platform/http/index.js';
import { callRoutes } from '../routes.js';
import { requireCall, toCallDetail } from '../call-log.js';

/** GET /api/v1/workspaces/{workspace_id}/calls/{call_id} — status history, transcript, duration, credits, recording. */
export const handler = implement(callRoutes.getCall, async (req) => {
  const access = await requireWorkspace(req.principal, req.params.workspace_id, 'workspace:read');
  const call = await requireCall(access.workspace.workspaceId, req.params.call_id);
  return { status: 200, body: toCallDetail(call) };
});
