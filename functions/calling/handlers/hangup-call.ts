import { requireWorkspace } from '../../access/workspace-access.js';
import { actorId } from '../../platform/auth/principal.js';
import { httpHandler } from '../../platform/http/index.js';
import { hangupCall, toCallDetail } from '../call-log.js';

/** POST /api/v1/workspaces/{workspace_id}/calls/{call_id}/hangup — workspace member (API key: start_call). */
export const handler = httpHandler({ auth: 'user_or_api_key', scope: 'start_call' }, async (req) => {
  const access = await requireWorkspace(req.principal, req.params.workspace_id, 'calls:write');
  const call = await hangupCall(access.workspace.workspaceId, req.params.call_id, actorId(req.principal));
  return { status: 200, body: toCallDetail(call) };
});
