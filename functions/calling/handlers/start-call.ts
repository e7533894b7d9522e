import { domainHandler, implement } from '../../platform/http/index.js';
import { startCallRoutes } from '../routes.js';
import { idempotencyKeyFrom } from '../../platform/idempotency.js';
import { startCall } from '../start-call.js';

/**
 * POST /api/v1/workspaces/{workspace_id}/agents/{agent_id}/start-call — exactly docs/api.md: a workspace
 * member, or an API key of the workspace with scope `start_call`. The kernel answers 401/403/422 in
 * the contract's order; the service the rest (404, 402, 429) and 201.
 */
const serveStartCall = implement(startCallRoutes.startCall, async (req) => {
  const call = await startCall({
    principal: req.principal,
    workspaceId: req.params.workspace_id,
    agentId: req.params.agent_id,
    body: req.body,
    idempotencyKey: idempotencyKeyFrom(req.headers),
  });
  return { status: 201, body: call };
});

/** Start-call is the hot path: a function of its own, so nothing else is loaded on a cold start. */
export const handler = domainHandler(startCallRoutes, { startCall: serveStartCall });
