import { requireWorkspace } from '../../access/workspace-access.js';
import { implement } from '../../platform/http/index.js';
import { campaignRoutes } from '../routes.js';
import { deleteCampaign } from '../service.js';

/** DELETE /api/v1/workspaces/{workspace_id}/campaigns/{campaign_id} — member (API key: campaigns:write). */
export const handler = implement(campaignRoutes.deleteCampaign, async (req) => {
  const access = await requireWorkspace(req.principal, req.params.workspace_id, 'campaigns:write');
  await deleteCampaign(access, req.params.campaign_id);
  return { status: 204 };
});
