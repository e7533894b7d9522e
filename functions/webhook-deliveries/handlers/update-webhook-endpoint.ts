import { requireWorkspace } from '../../access/workspace-access.js';
import { implement } from '../../platform/http/index.js';
import { endpointToWire, updateEventEndpoint } from '../endpoints.js';
import { webhookDeliveryRoutes } from '../routes.js';

/** PATCH /api/v1/workspaces/{workspace_id}/webhook-endpoints/{endpoint_id} — workspace member (API key: webhooks:write). */
export const handler = implement(webhookDeliveryRoutes.updateWebhookEndpoint, async (req) => {
  const access = await requireWorkspace(req.principal, req.params.workspace_id, 'webhooks:manage');
  const endpoint = await updateEventEndpoint(access.workspace.workspaceId, req.params.endpoint_id, {
    url: req.body.url,
    eventTypes: req.body.event_types,
    enabled: req.body.enabled,
  });
  return { status: 200, body: endpointToWire(endpoint) };
});
