import { requireWorkspace } from '../../access/workspace-access.js';
import { implement } from '../../platform/http/index.js';
import { webhookDeliveryRoutes } from '../routes.js';
import { rotateSecret, secretToWire } from '../secrets.js';

/**
 * POST /api/v1/workspaces/{workspace_id}/webhook-secret — workspace member: rotates the signing
 * secret; for 24 hours deliveries carry a signature by the new and by the old secret.
 */
export const handler = implement(webhookDeliveryRoutes.rotateWebhookSecret, async (req) => {
  const access = await requireWorkspace(req.principal, req.params.workspace_id, 'webhooks:manage');
  const secret = await rotateSecret(access.workspace.workspaceId);
  return { status: 200, body: secretToWire(secret) };
});
