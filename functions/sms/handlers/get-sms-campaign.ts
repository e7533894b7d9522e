import { requireWorkspace } from '../../access/workspace-access.js';
import { implement } from '../../platform/http/index.js';
import { requireCampaign } from '../campaigns.js';
import { smsRoutes } from '../routes.js';
import { campaignView } from '../views.js';

/** GET /api/v1/workspaces/{workspace_id}/sms-campaigns/{campaign_id} — any workspace role (API key: sms:read). */
export const handler = implement(smsRoutes.getSmsCampaign, async (req) => {
  const access = await requireWorkspace(req.principal, req.params.workspace_id, 'workspace:read');
  const campaign = await requireCampaign(access.workspace.workspaceId, req.params.campaign_id);
  return { status: 200, body: campaignView(campaign) };
});
