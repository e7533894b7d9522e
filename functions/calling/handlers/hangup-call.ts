import { requireWorkspace } from '../../access/workspace-access.js';
import { actorId } from '../../platform/auth/principal.js';
import { implement } from '../../platform/http/index.js';
import { callRoutes } from '../routes.js';
import { hangupCall, toCallDetail } from '../call-log.js';

/** POST /api/v1/workspaces/{workspace_id}/calls/{call_id}/hangup — workspace member (API key: start_call). */
export const handler = implement(callRoutes.hangupCall, async (req) => {
  const access = await requireWorkspace(req.principal, req.params.workspace_id, 'calls:write');
  const call = await hangupCall(access.workspace.workspaceId, req.params.call_id, actorId(req.principal));
  return { status: 200, body: toCallDetail(call) };
});
