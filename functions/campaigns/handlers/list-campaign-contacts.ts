import { requireWorkspace } from '../../access/workspace-access.js';
import { implement } from '../../platform/http/index.js';
import { campaignRoutes } from '../routes.js';
import { batchContactView, listBatchContacts, requireCampaign } from '../service.js';

/** GET /api/v1/workspaces/{workspace_id}/campaigns/{campaign_id}/contacts — any workspace role (campaigns:read). */
export const handler = implement(campaignRoutes.listCampaignContacts, async (req) => {
  const access = await requireWorkspace(req.principal, req.params.workspace_id, 'workspace:read');
  const campaign = await requireCampaign(access.workspace.workspaceId, req.params.campaign_id);
  const page = await listBatchContacts(campaign.workspaceId, campaign.campaignId, req.query);
  const now = new Date();
  return {
    status: 200,
    body: { items: page.items.map((bc) => batchContactView(bc, now)), next_cursor: page.nextCursor },
  };
});
