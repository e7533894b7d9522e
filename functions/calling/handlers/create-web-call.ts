import { forbidden } from '../../platform/errors.js';
import { implement } from '../../platform/http/index.js';
import { callRoutes } from '../routes.js';
import { createWebCall } from '../web-call.js';

/** POST /api/v1/workspaces/{workspace_id}/agents/{agent_id}/web-call — member (a user: the call is theirs). */
export const handler = implement(callRoutes.createWebCall, async (req) => {
  if (req.principal.kind !== 'user') throw forbidden();
  const body = await createWebCall({
    principal: req.principal,
    workspaceId: req.params.workspace_id,
    agentId: req.params.agent_id,
    body: req.body,
  });
  return { status: 201, body };
});
