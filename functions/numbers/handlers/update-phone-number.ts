import { requireWorkspace } from '../../access/workspace-access.js';
import { httpHandler } from '../../platform/http/index.js';
import { UpdateNumberBody } from '../schemas.js';
import { connectNumber, toNumberResponse } from '../service.js';

/** PATCH /api/v1/workspaces/{workspace_id}/phone-numbers/{number_id} — workspace member: `{agent_id}` connects, null disconnects. */
export const handler = httpHandler(
  { auth: 'user_or_api_key', scope: 'agents:write', body: UpdateNumberBody },
  async (req) => {
    const access = await requireWorkspace(req.principal, req.params.workspace_id, 'numbers:connect');
    const number = await connectNumber(access.workspace.workspaceId, req.params.number_id, req.body.agent_id);
    return { status: 200, body: toNumberResponse(number) };
  },
);
