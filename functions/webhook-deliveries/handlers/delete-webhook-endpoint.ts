import { requireWorkspace } from '../../access/workspace-access.js';
import { implement } from '../../platform/http/index.js';
import { deleteEventEndpoint } from '../endpoints.js';
import { webhookDeliveryRoutes } from '../routes.js';

/** DELETE /api/v1/workspaces/{workspace_id}/webhook-endpoints/{endpoint_id} — workspace member (API key: webhooks:write). */
export const handler = implement(webhookDeliveryRoutes.deleteWebhookEndpoint, async (req) => {
  const access = await requireWorkspace(req.principal, req.params.workspace_id, 'webhooks:manage');
  await deleteEventEndpoint(access.workspace.workspaceId, req.params.endpoint_id);
  return { status: 204 };
});
