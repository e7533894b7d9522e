import { requireWorkspace } from '../../access/workspace-access.js';
import { implement } from '../../platform/http/index.js';
import { campaignRoutes } from '../routes.js';
import { campaignView, listCampaigns, readProgress } from '../service.js';

/** GET /api/v1/workspaces/{workspace_id}/campaigns — any workspace role (API key: campaigns:read). */
export const handler = implement(campaignRoutes.listCampaigns, async (req) => {
  const access = await requireWorkspace(req.principal, req.params.workspace_id, 'workspace:read');
  const page = await listCampaigns(access.workspace.workspaceId, req.query);
  const items = await Promise.all(
    page.items.map(async (c) => campaignView(c, await readProgress(c.workspaceId, c.campaignId))),
  );
  return { status: 200, body: { items, next_cursor: page.nextCursor } };
});
