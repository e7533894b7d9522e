import { requireWorkspace } from '../../access/workspace-access.js';
import { implement } from '../../platform/http/index.js';
import { numberRoutes } from '../routes.js';
import { listNumbers, toNumberResponse } from '../service.js';

/** GET /api/v1/workspaces/{workspace_id}/phone-numbers — any workspace role (API key: agents:read). */
export const handler = implement(numberRoutes.listPhoneNumbers, async (req) => {
  const access = await requireWorkspace(req.principal, req.params.workspace_id, 'workspace:read');
  const page = await listNumbers(access.workspace.workspaceId, req.query);
  return { status: 200, body: { items: page.items.map(toNumberResponse), next_cursor: page.nextCursor } };
});
