import { requireWorkspace } from '../../access/workspace-access.js';
import { implement } from '../../platform/http/index.js';
import { webhookDeliveryRoutes } from '../routes.js';
import { deliveryToWire, resendDelivery } from '../deliveries.js';

/**
 * POST /api/v1/workspaces/{workspace_id}/webhook-deliveries/{delivery_id}/resend — workspace member:
 * one more attempt now, with the same `webhook-id`; returns the delivery with the new attempt.
 */
export const handler = implement(webhookDeliveryRoutes.resendWebhookDelivery, async (req) => {
  const access = await requireWorkspace(req.principal, req.params.workspace_id, 'webhooks:manage');
  const delivery = await resendDelivery(access.workspace.workspaceId, req.params.delivery_id);
  return { status: 200, body: deliveryToWire(delivery) };
});
