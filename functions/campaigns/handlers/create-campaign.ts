import { requireWorkspace } from '../../access/workspace-access.js';
import { implement } from '../../platform/http/index.js';
import { campaignRoutes } from '../routes.js';
import { createCampaign } from '../service.js';
import { readCampaignView } from '../view.js';

/** POST /api/v1/workspaces/{workspace_id}/campaigns — member (API key: campaigns:write); batch_outbound. */
export const handler = implement(campaignRoutes.createCampaign, async (req) => {
  const access = await requireWorkspace(req.principal, req.params.workspace_id, 'campaigns:write');
  const campaign = await createCampaign(access, req.body);
  return {
    status: 201,
    body: await readCampaignView(campaign, access.workspace.timezone),
  };
});
