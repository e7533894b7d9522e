import { requireWorkspace } from '../../access/workspace-access.js';
import { implement } from '../../platform/http/index.js';
import { numberRoutes } from '../routes.js';
import { connectNumber, toNumberResponse } from '../service.js';

/** PATCH /api/v1/workspaces/{workspace_id}/phone-numbers/{number_id} — workspace member: `{agent_id}` connects, null disconnects. */
export const handler = implement(numberRoutes.updatePhoneNumber, async (req) => {
  const access = await requireWorkspace(req.principal, req.params.workspace_id, 'numbers:connect');
  const number = await connectNumber(access.workspace.workspaceId, req.params.number_id, req.body.agent_id);
  return { status: 200, body: toNumberResponse(number) };
});
