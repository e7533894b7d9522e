import { requireWorkspace } from '../../access/workspace-access.js';
import { implement } from '../../platform/http/index.js';
import { createEventEndpoint, endpointToWire } from '../endpoints.js';
import { webhookDeliveryRoutes } from '../routes.js';

/** POST /api/v1/workspaces/{workspace_id}/webhook-endpoints — workspace member (API key: webhooks:write). */
export const handler = implement(webhookDeliveryRoutes.createWebhookEndpoint, async (req) => {
  const access = await requireWorkspace(req.principal, req.params.workspace_id, 'webhooks:manage');
  const endpoint = await createEventEndpoint(
    { workspaceId: access.workspace.workspaceId, organisationId: access.organisationId },
    { url: req.body.url, eventTypes: req.body.event_types, enabled: req.body.enabled },
  );
  return { status: 201, body: endpointToWire(endpoint) };
});
