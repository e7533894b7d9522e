import { requireWorkspace } from '../../access/workspace-access.js';
import { implement } from '../../platform/http/index.js';
import { deleteCampaign } from '../campaigns.js';
import { smsRoutes } from '../routes.js';

/** DELETE /api/v1/workspaces/{workspace_id}/sms-campaigns/{campaign_id} — workspace member (API key: sms:write). */
export const handler = implement(smsRoutes.deleteSmsCampaign, async (req) => {
  const access = await requireWorkspace(req.principal, req.params.workspace_id, 'sms:write');
  await deleteCampaign(access.workspace.workspaceId, req.params.campaign_id);
  return { status: 204 };
});
