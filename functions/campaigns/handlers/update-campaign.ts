import { requireWorkspace } from '../../access/workspace-access.js';
import { implement } from '../../platform/http/index.js';
import { campaignRoutes } from '../routes.js';
import { updateCampaign } from '../service.js';
import { readCampaignView } from '../view.js';

/** PATCH /api/v1/workspaces/{workspace_id}/campaigns/{campaign_id} — member (API key: campaigns:write). */
export const handler = implement(campaignRoutes.updateCampaign, async (req) => {
  const access = await requireWorkspace(req.principal, req.params.workspace_id, 'campaigns:write');
  const campaign = await updateCampaign(access, req.params.campaign_id, req.body);
  return {
    status: 200,
    body: await readCampaignView(campaign, access.workspace.timezone),
  };
});
