import { requireWorkspace } from '../../access/workspace-access.js';
import { implement } from '../../platform/http/index.js';
import { webhookDeliveryRoutes } from '../routes.js';
import { sendTestPayload } from '../../post-call/test-payload.js';

/**
 * POST /api/v1/workspaces/{workspace_id}/agents/{agent_id}/post-call-actions/{action_id}/test —
 * workspace member: sends a signed test payload to the webhook action's URL now; returns the attempt.
 */
export const handler = implement(webhookDeliveryRoutes.testPostCallAction, async (req) => {
  const access = await requireWorkspace(req.principal, req.params.workspace_id, 'webhooks:manage');
  const result = await sendTestPayload({
    workspaceId: access.workspace.workspaceId,
    organisationId: access.organisationId,
    agentId: req.params.agent_id,
    actionId: req.params.action_id,
  });
  return { status: 200, body: result };
});
