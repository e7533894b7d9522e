import { requireWorkspace } from '../../access/workspace-access.js';
import { httpHandler } from '../../platform/http/index.js';
import { rotateSecret, secretToWire } from '../../webhooks/secrets.js';

/**
 * POST /api/v1/workspaces/{workspace_id}/webhook-secret — workspace member: rotates the signing
 * secret; for 24 hours deliveries carry a signature by the new and by the old secret.
 */
export const handler = httpHandler({ auth: 'user' }, async (req) => {
  const access = await requireWorkspace(req.principal, req.params.workspace_id, 'webhooks:manage');
  const secret = await rotateSecret(access.workspace.workspaceId);
  return { status: 200, body: secretToWire(secret) };
});
