import { requireWorkspace } from '../../access/workspace-access.js';
import { implement } from '../../platform/http/index.js';
import { campaignRoutes } from '../routes.js';
import { listCampaigns } from '../service.js';
import { readCampaignView } from '../view.js';

/** GET /api/v1/workspaces/{workspace_id}/campaigns — any workspace role (API key: campaigns:read). */
export const handler = implement(campaignRoutes.listCampaigns, async (req) => {
  const access = await requireWorkspace(req.principal, req.params.workspace_id, 'workspace:read');
  const page = await listCampaigns(access.workspace.workspaceId, req.query);
  const items = await Promise.all(page.items.map((c) => readCampaignView(c, access.workspace.timezone)));
  return { status: 200, body: { items, next_cursor: page.nextCursor } };
});
