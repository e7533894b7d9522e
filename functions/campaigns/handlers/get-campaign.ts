import { requireWorkspace } from '../../access/workspace-access.js';
import { implement } from '../../platform/http/index.js';
import { campaignRoutes } from '../routes.js';
import { requireCampaign } from '../service.js';
import { readCampaignView } from '../view.js';

/** GET /api/v1/workspaces/{workspace_id}/campaigns/{campaign_id} — any workspace role (API key: campaigns:read). */
export const handler = implement(campaignRoutes.getCampaign, async (req) => {
  const access = await requireWorkspace(req.principal, req.params.workspace_id, 'workspace:read');
  const campaign = await requireCampaign(access.workspace.workspaceId, req.params.campaign_id);
  return {
    status: 200,
    body: await readCampaignView(campaign, access.workspace.timezone),
  };
});
