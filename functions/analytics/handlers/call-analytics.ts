import { requireWorkspace } from '../../access/workspace-access.js';
import { implement } from '../../platform/http/index.js';
import { analyticsRoutes } from '../routes.js';
import { callAnalytics } from '../service.js';

/** GET /api/v1/workspaces/{workspace_id}/analytics/calls — viewer (API key: calls:read). */
export const handler = implement(analyticsRoutes.callAnalytics, async (req) => {
  const access = await requireWorkspace(req.principal, req.params.workspace_id, 'workspace:read');
  return { status: 200, body: await callAnalytics(access.workspace, req.query) };
});
