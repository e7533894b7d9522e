import { httpHandler } from '../../platform/http/index.js';
import { idempotencyKeyFrom } from '../../platform/idempotency.js';
import { StartCallBody } from '../schemas.js';
import { startCall } from '../start-call.js';

/**
 * POST /api/v1/workspaces/{workspace_id}/agents/{agent_id}/start-call — exactly spec 4.1: a workspace
 * member, or an API key of the workspace with scope `start_call`. The kernel answers 401/403/422 in
 * the contract's order; the service the rest (404, 402, 429) and 201.
 */
export const handler = httpHandler(
  { auth: 'user_or_api_key', scope: 'start_call', body: StartCallBody, idempotency: 'route' },
  async (req) => {
    const call = await startCall({
      principal: req.principal,
      workspaceId: req.params.workspace_id,
      agentId: req.params.agent_id,
      body: req.body,
      idempotencyKey: idempotencyKeyFrom(req.headers),
    });
    return { status: 201, body: call };
  },
);
