import { requireWorkspace } from '../../access/workspace-access.js';
import { implement } from '../../platform/http/index.js';
import { endpointToWire, listEventEndpoints } from '../endpoints.js';
import { webhookDeliveryRoutes } from '../routes.js';

/** GET /api/v1/workspaces/{workspace_id}/webhook-endpoints — any workspace role (API key: webhooks:read). */
export const handler = implement(webhookDeliveryRoutes.listWebhookEndpoints, async (req) => {
  const access = await requireWorkspace(req.principal, req.params.workspace_id, 'workspace:read');
  const endpoints = await listEventEndpoints(access.workspace.workspaceId);
  return { status: 200, body: { items: endpoints.map(endpointToWire), next_cursor: null } };
});
