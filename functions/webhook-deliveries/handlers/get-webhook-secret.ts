import { requireWorkspace } from '../../access/workspace-access.js';
import { implement } from '../../platform/http/index.js';
import { webhookDeliveryRoutes } from '../routes.js';
import { getOrCreateSecret, secretToWire } from '../secrets.js';

/** GET /api/v1/workspaces/{workspace_id}/webhook-secret — workspace member: the signing secret (made on first read). */
export const handler = implement(webhookDeliveryRoutes.getWebhookSecret, async (req) => {
  const access = await requireWorkspace(req.principal, req.params.workspace_id, 'webhooks:read_secret');
  const secret = await getOrCreateSecret(access.workspace.workspaceId);
  return { status: 200, body: secretToWire(secret) };
});
