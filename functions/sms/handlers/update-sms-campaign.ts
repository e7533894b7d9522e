import { requireWorkspace } from '../../access/workspace-access.js';
import { implement } from '../../platform/http/index.js';
import { updateCampaign } from '../campaigns.js';
import { smsRoutes } from '../routes.js';
import { campaignView } from '../views.js';

/**
 * PATCH /api/v1/workspaces/{workspace_id}/sms-campaigns/{campaign_id} — workspace member (API key:
 * sms:write). `{status: sending}` answers 202: the campaign sends in the background.
 */
export const handler = implement(smsRoutes.updateSmsCampaign, async (req) => {
  const access = await requireWorkspace(req.principal, req.params.workspace_id, 'sms:write');
  const { campaign, started } = await updateCampaign(
    access.workspace.workspaceId,
    req.params.campaign_id,
    req.body,
  );
  return { status: started ? 202 : 200, body: campaignView(campaign) };
});
