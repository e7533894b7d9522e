import { requireWorkspace } from '../../access/workspace-access.js';
import { implement } from '../../platform/http/index.js';
import { webhookDeliveryRoutes } from '../routes.js';
import { deliveryToWire, listDeliveries } from '../deliveries.js';

/**
 * GET /api/v1/workspaces/{workspace_id}/webhook-deliveries — any workspace role (API key: calls:read): one row per event
 * sent, newest first, with every attempt; `?call_id=` for one call's deliveries, `?endpoint_id=` for one webhook endpoint's.
 */
export const handler = implement(webhookDeliveryRoutes.listWebhookDeliveries, async (req) => {
  const access = await requireWorkspace(req.principal, req.params.workspace_id, 'workspace:read');
  const page = await listDeliveries(access.workspace.workspaceId, {
    callId: req.query.call_id,
    endpointId: req.query.endpoint_id,
    limit: req.query.limit,
    cursor: req.query.cursor,
  });
  return { status: 200, body: { items: page.items.map(deliveryToWire), next_cursor: page.nextCursor } };
});
