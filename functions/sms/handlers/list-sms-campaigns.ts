import { requireWorkspace } from '../../access/workspace-access.js';
import { implement } from '../../platform/http/index.js';
import { listCampaigns } from '../campaigns.js';
import { smsRoutes } from '../routes.js';
import { campaignView } from '../views.js';

/** GET /api/v1/workspaces/{workspace_id}/sms-campaigns — any workspace role (API key: sms:read). */
export const handler = implement(smsRoutes.listSmsCampaigns, async (req) => {
  const access = await requireWorkspace(req.principal, req.params.workspace_id, 'workspace:read');
  const page = await listCampaigns(access.workspace.workspaceId, req.query);
  return { status: 200, body: { items: page.items.map(campaignView), next_cursor: page.nextCursor } };
});
